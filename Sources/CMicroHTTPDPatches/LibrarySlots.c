// libmicrohttpd calls the C library through its PLT: one
// R_X86_64_JUMP_SLOT relocation per function, a slot holding the address it
// jumps to. With BIND_NOW, the loader fills every slot at load and makes
// them read-only (RELRO). `mhd_redirect_library_calls` finds the slots in
// libmicrohttpd's dynamic section and stores other addresses in them, so
// that libmicrohttpd's calls, and only its calls, land elsewhere
// (PoolRelease.c, ErrorHook.c).

#define _GNU_SOURCE
#include "LibrarySlots.h"

#if defined(__linux__) && defined(__x86_64__)

#include <elf.h>
#include <link.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/// The address of libmicrohttpd's PLT slot for `name`, or NULL.
static void **library_slot(struct dl_phdr_info *info, const char *name)
{
    const ElfW(Dyn) *dynamic = NULL;
    for (ElfW(Half) index = 0; index < info->dlpi_phnum; index++) {
        if (info->dlpi_phdr[index].p_type == PT_DYNAMIC) {
            dynamic = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[index].p_vaddr);
        }
    }
    if (dynamic == NULL) return NULL;
    const ElfW(Rela) *relocations = NULL;
    const ElfW(Sym) *symbols = NULL;
    const char *strings = NULL;
    size_t relocations_size = 0;
    // glibc's loader rewrites these entries to addresses; other loaders
    // leave them as offsets from the library's base.
#define ADDRESS(value) ((value) < info->dlpi_addr ? info->dlpi_addr + (value) : (value))
    for (const ElfW(Dyn) *entry = dynamic; entry->d_tag != DT_NULL; entry++) {
        switch (entry->d_tag) {
        case DT_JMPREL: relocations = (const ElfW(Rela) *)ADDRESS(entry->d_un.d_ptr); break;
        case DT_PLTRELSZ: relocations_size = entry->d_un.d_val; break;
        case DT_SYMTAB: symbols = (const ElfW(Sym) *)ADDRESS(entry->d_un.d_ptr); break;
        case DT_STRTAB: strings = (const char *)ADDRESS(entry->d_un.d_ptr); break;
        default: break;
        }
    }
#undef ADDRESS
    if (relocations == NULL || symbols == NULL || strings == NULL) return NULL;
    for (size_t index = 0; index < relocations_size / sizeof(ElfW(Rela)); index++) {
        const ElfW(Rela) *relocation = &relocations[index];
        if (ELF64_R_TYPE(relocation->r_info) != R_X86_64_JUMP_SLOT) continue;
        if (strcmp(strings + symbols[ELF64_R_SYM(relocation->r_info)].st_name, name) == 0) {
            return (void **)(info->dlpi_addr + relocation->r_offset);
        }
    }
    return NULL;
}

/// Stores `function` in `slot`. With BIND_NOW the slot lies in the RELRO
/// segment, which the loader made read-only from its first page to its last
/// whole page: opened for the one store, read-only again after. With lazy
/// binding, or in RELRO's last partial page, it is writable and stays so.
static bool write_slot(struct dl_phdr_info *info, void **slot, void *function)
{
    const uintptr_t page_size = (uintptr_t)sysconf(_SC_PAGESIZE);
    const uintptr_t page = (uintptr_t)slot & ~(page_size - 1);
    bool read_only = false;
    for (ElfW(Half) index = 0; index < info->dlpi_phnum; index++) {
        const ElfW(Phdr) *header = &info->dlpi_phdr[index];
        const uintptr_t start = info->dlpi_addr + header->p_vaddr;
        const uintptr_t end = (start + header->p_memsz) & ~(page_size - 1);
        if (header->p_type == PT_GNU_RELRO && page + page_size > start && page + page_size <= end) read_only = true;
    }
    if (read_only && mprotect((void *)page, page_size, PROT_READ | PROT_WRITE) != 0) return false;
    __atomic_store_n(slot, function, __ATOMIC_RELEASE);
    if (read_only) mprotect((void *)page, page_size, PROT_READ);
    return true;
}

struct redirection {
    const char *const *names;
    void *const *functions;
    size_t count;
    bool done;
};

enum { most_redirected = 8 };

static int redirect_in_library(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct redirection *redirection = data;
    if (info->dlpi_name == NULL || strstr(info->dlpi_name, "libmicrohttpd.so") == NULL) return 0;
    void **slots[most_redirected];
    for (size_t index = 0; index < redirection->count; index++) {
        slots[index] = library_slot(info, redirection->names[index]);
        if (slots[index] == NULL) return 1;
    }
    redirection->done = true;
    for (size_t index = 0; index < redirection->count; index++) {
        redirection->done = write_slot(info, slots[index], redirection->functions[index]) && redirection->done;
    }
    return 1;
}

bool mhd_redirect_library_calls(const char *const names[], void *const functions[], size_t count)
{
    if (count > most_redirected) return false;
    struct redirection redirection = {names, functions, count, false};
    dl_iterate_phdr(redirect_in_library, &redirection);
    return redirection.done;
}

#else

bool mhd_redirect_library_calls(const char *const names[], void *const functions[], size_t count)
{
    (void)names;
    (void)functions;
    (void)count;
    return false;
}

#endif
