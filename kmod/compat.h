/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one place for differences between the kernels fhook supports
 * (Debian 6.1 and 6.12).  Features are detected from the headers by Kbuild
 * (FHOOK_HAVE_*) or by #ifdef on macros, never by LINUX_VERSION_CODE:
 * Debian backports APIs into its stable kernels.
 */
#ifndef FHOOK_COMPAT_H
#define FHOOK_COMPAT_H

#include <linux/mm.h>

/* vm_flags became read-only with accessors in 6.3. */
static inline void fhook_vm_flags_set(struct vm_area_struct *vma, vm_flags_t flags)
{
#ifdef FHOOK_HAVE_VM_FLAGS_SET
	vm_flags_set(vma, flags);
#else
	vma->vm_flags |= flags;
#endif
}

static inline void fhook_vm_flags_clear(struct vm_area_struct *vma, vm_flags_t flags)
{
#ifdef FHOOK_HAVE_VM_FLAGS_SET
	vm_flags_clear(vma, flags);
#else
	vma->vm_flags &= ~flags;
#endif
}

#endif /* FHOOK_COMPAT_H */
