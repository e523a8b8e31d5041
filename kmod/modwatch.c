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
 * notifier, so none of them races an unload; a PROBE_ADD while a module
 * is between its GOING notification and being freed is refused (-EAGAIN).
 */
#include "fhook.h"

#include <linux/glob.h>
#include <linux/kallsyms.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/notifier.h>
#include <linux/slab.h>
#include <linux/string.h>

static LIST_HEAD(fhook_watched);
static DEFINE_MUTEX(fhook_watch_lock);	/* the lists, arming and unhooking */
/* unloads seen; a PROBE_ADD that saw one meanwhile is retried (EAGAIN) */
static u64 fhook_unloads;
/*
 * Loads seen, and the modules loaded since fhook was: a module loaded
 * after a probe was added cannot be in its glob filters' hash, whatever
 * its symbols (its explicit addresses are always checked).
 */
static u64 fhook_loads;
static LIST_HEAD(fhook_loaded);

struct fhook_loaded_mod {
	struct list_head node;
	struct module *mod;		/* compared, never dereferenced */
	u64 gen;			/* fhook_loads when it came */
};

/*
 * Modules past their GOING notification and maybe not freed yet: their
 * symbols still resolve (kallsyms, ftrace records) until free_module(),
 * so a probe added meanwhile could take addresses about to be freed.
 * PROBE_ADD of a hook or direct probe waits (-EAGAIN) until they are
 * gone, which is checked by name: sprint_symbol() of one of the module's
 * functions stops naming the module once it is off the module list.
 */
struct fhook_going_mod {
	struct list_head node;
	unsigned long func;		/* a function of the module */
	char name[MODULE_NAME_LEN];
};

static LIST_HEAD(fhook_going);

void fhook_modwatch_lock(void)
{
	mutex_lock(&fhook_watch_lock);
}

void fhook_modwatch_unlock(void)
{
	mutex_unlock(&fhook_watch_lock);
}


/*
 * Under the lock: forget the going modules that are gone, and any named
 * @coming (a module is loaded only once its namesake is freed).
 */
static bool fhook_going_pending(const char *coming)
{
	char sym[KSYM_SYMBOL_LEN], tag[MODULE_NAME_LEN + 3];
	struct fhook_going_mod *g, *tmp;

	list_for_each_entry_safe(g, tmp, &fhook_going, node) {
		sprint_symbol(sym, g->func);
		snprintf(tag, sizeof(tag), "[%s]", g->name);
		if (!strstr(sym, tag) || (coming && !strcmp(coming, g->name))) {
			list_del(&g->node);
			kfree(g);
		}
	}
	return !list_empty(&fhook_going);
}

/*
 * Taken at the start of PROBE_ADD, before any address is looked up.  While
 * a module is between GOING and its free, a generation that never
 * matches: what PROBE_ADD resolves meanwhile (globs, ftrace records) may
 * be that module's, even if it is freed before fhook_modwatch_add().
 */
u64 fhook_modwatch_gen(void)
{
	u64 gen;

	mutex_lock(&fhook_watch_lock);
	gen = fhook_going_pending(NULL) ? U64_MAX : fhook_unloads;
	mutex_unlock(&fhook_watch_lock);
	return gen;
}

/* Under the lock, from the GOING notification: @mod's first function. */
static void fhook_going_add(struct module *mod)
{
	struct fhook_going_mod *g;
	struct mod_kallsyms *ks;
	unsigned long func = 0;
	unsigned int i;

	rcu_read_lock();
	ks = rcu_dereference(mod->kallsyms);
	/* (not an arm64 mapping symbol, "$x": kallsyms never names those) */
	for (i = 0; ks && i < ks->num_symtab && !func; i++)
		if ((ks->typetab[i] == 't' || ks->typetab[i] == 'T') &&
		    ks->strtab[ks->symtab[i].st_name] != '$')
			func = ks->symtab[i].st_value;
	rcu_read_unlock();
	if (!func)
		return;		/* nothing a probe could take */
	g = kmalloc(sizeof(*g), GFP_KERNEL);
	if (!g) {
		/* cannot tell when it is freed: at worst a probe is added meanwhile */
		pr_warn("module %s going: out of memory to watch it\n", mod->name);
		return;
	}
	g->func = func;
	strscpy(g->name, mod->name, sizeof(g->name));
	list_add(&g->node, &fhook_going);
}

/*
 * From PROBE_ADD to release.  -EAGAIN if a module went away since @gen
 * (fhook_modwatch_gen()), or is going and not freed yet: the addresses
 * looked up meanwhile may be stale.
 */
int fhook_modwatch_add(struct fhook_probe *p, u64 gen)
{
	int ret = -EAGAIN;

	mutex_lock(&fhook_watch_lock);
	if (gen == fhook_unloads && !fhook_going_pending(NULL)) {
		p->watch_loads = fhook_loads;
		list_add(&p->watch_node, &fhook_watched);
		ret = 0;
	}
	mutex_unlock(&fhook_watch_lock);
	return ret;
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

/* Under the lock: a module came (its generation noted) or goes (forgotten). */
static u64 fhook_module_gen(struct module *mod, bool coming)
{
	struct fhook_loaded_mod *m;
	u64 gen = 0;

	if (coming) {
		m = kmalloc(sizeof(*m), GFP_KERNEL);
		if (m) {	/* without: 0, as if it was there before */
			m->mod = mod;
			m->gen = ++fhook_loads;
			list_add(&m->node, &fhook_loaded);
		}
		return 0;
	}
	list_for_each_entry(m, &fhook_loaded, node) {
		if (m->mod == mod) {
			gen = m->gen;
			list_del(&m->node);
			kfree(m);
			break;
		}
	}
	return gen;
}

static int fhook_module_notify(struct notifier_block *nb, unsigned long action, void *data)
{
	struct module *mod = data;
	struct fhook_probe *p;
	u64 gen;

	if (action != MODULE_STATE_COMING && action != MODULE_STATE_GOING)
		return NOTIFY_DONE;
	mutex_lock(&fhook_watch_lock);
	gen = fhook_module_gen(mod, action == MODULE_STATE_COMING);
	if (action == MODULE_STATE_COMING) {
		fhook_going_pending(mod->name);
		/*
		 * ftrace knew the module's functions before this notifier: a
		 * probe added meanwhile may have its glob matches; it counts
		 * as added after the load
		 */
		list_for_each_entry(p, &fhook_watched, watch_node)
			if (p->watch_loads == fhook_loads - 1 && p->kind->in_module(p, mod, true))
				p->watch_loads = fhook_loads;
		goto out;
	}
	fhook_unloads++;
	fhook_going_add(mod);
	list_for_each_entry(p, &fhook_watched, watch_node) {
		/* loaded after the probe was added: not in its glob filters */
		if (p->gone || !p->kind->in_module(p, mod, gen <= p->watch_loads))
			continue;
		p->gone = true;
		p->kind->unhook(p);
		pr_warn("probe %u: module %s is going away: the probe on it is gone for good\n",
			p->id, mod->name);
	}
out:
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
	struct fhook_going_mod *g, *gtmp;
	struct fhook_loaded_mod *m, *tmp;

	unregister_module_notifier(&fhook_module_nb);
	list_for_each_entry_safe(m, tmp, &fhook_loaded, node)
		kfree(m);
	list_for_each_entry_safe(g, gtmp, &fhook_going, node)
		kfree(g);
}

/*
 * Has ftrace a call site in [@start, @end) of @mod, i.e. can the function
 * there be in an ops' hash?  The module's __mcount_loc list, which stays
 * with its core text until it is freed; scanned whole (no assumption that
 * ftrace sorted it); each entry moved into its function first (arm64's
 * are before it: FHOOK_ARCH_CALLSITE_BIAS).
 */
static bool fhook_module_traceable(struct module *mod, unsigned long start, unsigned long end)
{
#ifdef CONFIG_FTRACE_MCOUNT_RECORD
	unsigned int i;

	for (i = 0; i < mod->num_ftrace_callsites; i++) {
		unsigned long site = mod->ftrace_callsites[i] + FHOOK_ARCH_CALLSITE_BIAS;

		if (site >= start && site < end)
			return true;
	}
	return false;
#else
	return true;
#endif
}

/*
 * Can a function of @mod be in the hash of an ops filtered by @filter's
 * globs and none of @exclude's?  Only those ftrace can trace: a notrace
 * function whose name matches was never in it.
 */
bool fhook_module_matches(struct module *mod, const char *filter, const char *exclude)
{
	struct mod_kallsyms *ks;
	bool found = false;
	unsigned int i;

	rcu_read_lock();
	ks = rcu_dereference(mod->kallsyms);
	for (i = 0; ks && i < ks->num_symtab && !found; i++) {
		const Elf_Sym *sym = &ks->symtab[i];
		const char *name = ks->strtab + sym->st_name;
		char type = ks->typetab[i];

		if (type != 't' && type != 'T')
			continue;
		if (!fhook_globs_match(filter, name) || fhook_globs_match(exclude, name))
			continue;
		/* a symbol without a size: its first bytes (endbr64, the call) */
		found = fhook_module_traceable(mod, sym->st_value,
					       sym->st_value + max_t(unsigned long, sym->st_size, 16));
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
