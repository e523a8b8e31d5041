// SPDX-License-Identifier: GPL-2.0
/*
 * fhook_linger.ko: for the guest tests only.  When the module named by
 * the `target` parameter goes away, this module's unload notifier, the
 * last one called, holds the unload for `linger_ms` between the GOING
 * notifications and the module's free, or until `release` is written 1:
 * its symbols and ftrace records still resolve meanwhile, as they do
 * briefly in every unload.  `lingering` is 1 while it waits.
 */
#include <linux/delay.h>
#include <linux/module.h>
#include <linux/notifier.h>

static char *target = "fhook_testmod";
module_param(target, charp, 0444);
MODULE_PARM_DESC(target, "the module whose unload is held");

static unsigned int linger_ms = 60000;
module_param(linger_ms, uint, 0444);
MODULE_PARM_DESC(linger_ms, "how long it is held at most");

static int release;
module_param(release, int, 0644);
MODULE_PARM_DESC(release, "write 1 to end the hold");

static int lingering;
module_param(lingering, int, 0444);
MODULE_PARM_DESC(lingering, "1 while an unload is held");

static int fhook_linger_notify(struct notifier_block *nb, unsigned long action, void *data)
{
	struct module *mod = data;
	unsigned int waited;

	if (action != MODULE_STATE_GOING || strcmp(mod->name, target))
		return NOTIFY_DONE;
	WRITE_ONCE(lingering, 1);
	for (waited = 0; waited < linger_ms && !READ_ONCE(release); waited += 20)
		msleep(20);
	WRITE_ONCE(lingering, 0);
	return NOTIFY_DONE;
}

static struct notifier_block fhook_linger_nb = {
	.notifier_call = fhook_linger_notify,
	.priority = INT_MIN,	/* after every other notifier, fhook's too */
};

static int __init fhook_linger_init(void)
{
	return register_module_notifier(&fhook_linger_nb);
}

static void __exit fhook_linger_exit(void)
{
	unregister_module_notifier(&fhook_linger_nb);
}

module_init(fhook_linger_init);
module_exit(fhook_linger_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("fhook guest tests: hold a module's unload after its GOING notification");
