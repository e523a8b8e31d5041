// SPDX-License-Identifier: GPL-2.0
/*
 * Hooks and direct probes on functions of a module that goes away.
 *
 * An ftrace_ops keeps a module's addresses in its filter after the module
 * is unloaded, and for DIRECT and IPMODIFY ops that is harmful: a module
 * loaded later at the same address warns in ftrace (referenced_filters())
 * and would be hooked itself; a redirect would jump into freed text.  fhook
 * cannot pin the module (__module_address() is not exported), so it
 * watches module unloads instead: every hook and direct probe is on a
 * list from PROBE_ADD to its release, and when a module goes, the ones
 * that touch it are unhooked and marked gone for good: a later START
 * fails with -EIDRM instead of hooking whatever is loaded at the old
 * address (their session goes on without them; the kernel log says so).
 * Arming, unhooking and DIRECT_MODIFY run under the same lock as the
 * notifier, so none of them races an unload.
 */
#include "fhook.h"

#include <linux/glob.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/notifier.h>
#include <linux/string.h>

static LIST_HEAD(fhook_watched);
static DEFINE_MUTEX(fhook_watch_lock);	/* the list, arming and unhooking */

void fhook_modwatch_lock(void)
{
	mutex_lock(&fhook_watch_lock);
}

void fhook_modwatch_unlock(void)
{
	mutex_unlock(&fhook_watch_lock);
}

/* From PROBE_ADD (before anything is registered) to release. */
void fhook_modwatch_add(struct fhook_probe *p)
{
	mutex_lock(&fhook_watch_lock);
	list_add(&p->watch_node, &fhook_watched);
	mutex_unlock(&fhook_watch_lock);
}

void fhook_modwatch_del(struct fhook_probe *p)
{
	mutex_lock(&fhook_watch_lock);
	list_del_init(&p->watch_node);
	mutex_unlock(&fhook_watch_lock);
}

/* START: @arm runs unless a module the probe touches has gone. */
int fhook_modwatch_arm(struct fhook_probe *p, int (*arm)(struct fhook_probe *p))
{
	int ret;

	mutex_lock(&fhook_watch_lock);
	ret = p->gone ? -EIDRM : arm(p);
	mutex_unlock(&fhook_watch_lock);
	return ret;
}

/* STOP, close: unhook @p unless an unload did it first. */
void fhook_modwatch_unhook(struct fhook_probe *p, void (*unhook)(struct fhook_probe *p))
{
	mutex_lock(&fhook_watch_lock);
	unhook(p);
	mutex_unlock(&fhook_watch_lock);
}

static int fhook_module_notify(struct notifier_block *nb, unsigned long action, void *data)
{
	struct module *mod = data;
	struct fhook_probe *p;

	if (action != MODULE_STATE_GOING)
		return NOTIFY_DONE;
	mutex_lock(&fhook_watch_lock);
	list_for_each_entry(p, &fhook_watched, watch_node) {
		if (p->gone || !p->kind->in_module(p, mod))
			continue;
		p->gone = true;
		p->kind->unhook(p);
		pr_warn("probe %u: module %s is going away: the probe on it is gone for good\n",
			p->id, mod->name);
	}
	mutex_unlock(&fhook_watch_lock);
	return NOTIFY_DONE;
}

static struct notifier_block fhook_module_nb = {
	.notifier_call = fhook_module_notify,
};

int fhook_modwatch_init(void)
{
	return register_module_notifier(&fhook_module_nb);
}

void fhook_modwatch_exit(void)
{
	unregister_module_notifier(&fhook_module_nb);
}

/* Does a function of @mod match @filter's globs and none of @exclude's? */
bool fhook_module_matches(struct module *mod, const char *filter, const char *exclude)
{
	struct mod_kallsyms *ks;
	bool found = false;
	unsigned int i;

	rcu_read_lock();
	ks = rcu_dereference(mod->kallsyms);
	for (i = 0; ks && i < ks->num_symtab && !found; i++) {
		const char *name = ks->strtab + ks->symtab[i].st_name;
		char type = ks->typetab[i];

		if (type != 't' && type != 'T')
			continue;
		found = fhook_globs_match(filter, name) && !fhook_globs_match(exclude, name);
	}
	rcu_read_unlock();
	return found;
}

/* Does @name match one of the whitespace-separated globs of @text? */
bool fhook_globs_match(const char *text, const char *name)
{
	char pat[FHOOK_MAX_PATTERN_LEN + 1];
	size_t len;

	while (text && *text) {
		text = skip_spaces(text);
		len = strcspn(text, " \t\n\r\v\f");
		if (!len)
			break;
		if (len <= FHOOK_MAX_PATTERN_LEN) {
			memcpy(pat, text, len);
			pat[len] = '\0';
			if (glob_match(pat, name))
				return true;
		}
		text += len;
	}
	return false;
}
