// SPDX-License-Identifier: GPL-2.0
/*
 * Hooks and direct probes on functions of a module that goes away.
 *
 * An ftrace_ops keeps a module's addresses in its filter after the module
 * is unloaded, and for DIRECT and IPMODIFY ops that is harmful: a module
 * loaded later at the same address warns in ftrace (referenced_filters())
 * and would be hooked itself; a redirect would jump into freed text.  fhook
 * cannot pin the module (__module_address() is not exported), so it
 * watches module unloads instead: every armed hook and direct probe is on
 * a list, and when a module goes, the ones that touch it are unhooked
 * (their session goes on without them; the kernel log says so).
 */
#include "fhook.h"

#include <linux/glob.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/notifier.h>
#include <linux/string.h>

static LIST_HEAD(fhook_watched);
static DEFINE_MUTEX(fhook_watch_lock);	/* the list, and each probe's unhooking */

void fhook_modwatch_add(struct fhook_probe *p)
{
	mutex_lock(&fhook_watch_lock);
	list_add(&p->watch_node, &fhook_watched);
	mutex_unlock(&fhook_watch_lock);
}

/* Unhook @p once, whoever comes first: its session or a module unload. */
void fhook_modwatch_unhook(struct fhook_probe *p, void (*unhook)(struct fhook_probe *p))
{
	mutex_lock(&fhook_watch_lock);
	if (!list_empty(&p->watch_node)) {
		list_del_init(&p->watch_node);
		unhook(p);
	}
	mutex_unlock(&fhook_watch_lock);
}

static int fhook_module_notify(struct notifier_block *nb, unsigned long action, void *data)
{
	struct module *mod = data;
	struct fhook_probe *p, *tmp;

	if (action != MODULE_STATE_GOING)
		return NOTIFY_DONE;
	mutex_lock(&fhook_watch_lock);
	list_for_each_entry_safe(p, tmp, &fhook_watched, watch_node) {
		if (!p->kind->in_module(p, mod))
			continue;
		list_del_init(&p->watch_node);
		p->kind->unhook(p);
		pr_warn("probe %u: module %s is going away: its hook on it is removed\n", p->id,
			mod->name);
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
