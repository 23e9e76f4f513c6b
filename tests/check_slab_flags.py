#!/usr/bin/env python3
# check_slab_flags.py TREE HELPERS: the table of cache flags in the gdb
# helpers (HELPERS, gdb/readers.py) against the #defines of pristine 6.1
# in the kit's kernel tree (TREE, branch pristine): every flag with its
# value, none missing.  DWARF does not carry #defines, so the helpers keep
# a copy, and this keeps it honest.  Exits 1 naming each difference.
import re
import subprocess
import sys

tree, helpers = sys.argv[1], sys.argv[2]
src = ""
for f in ("include/linux/slab.h", "mm/slab.h", "mm/slub.c"):
    src += subprocess.run(["git", "-C", tree, "show", "pristine:" + f],
                          check=True, capture_output=True, text=True).stdout
kernel = {m.group(1): int(m.group(2), 16) for m in re.finditer(
    r"^#\s*define\s+(SLAB_\w+|__OBJECT_POISON|__CMPXCHG_DOUBLE)\s+"
    r"\(\(slab_flags_t __force\)(0x[0-9a-fA-F]+)U?\)", src, re.M)}
table = {m.group(2): int(m.group(1), 16) for m in re.finditer(
    r'^\s*\((0x[0-9a-fA-F]+), "(\w+)"\),', open(helpers).read(), re.M)}
bad = 0
for name, value in sorted(table.items()):
    if kernel.get(name) != value:
        print("%s: the helpers say 0x%08x, 6.1 says %s" % (
            name, value, "0x%08x" % kernel[name] if name in kernel else "nothing"))
        bad = 1
for name in sorted(set(kernel) - set(table)):
    print("%s (0x%08x): in 6.1, not in the helpers' table" % (name, kernel[name]))
    bad = 1
print("%d flags compared" % len(table))
sys.exit(bad)
