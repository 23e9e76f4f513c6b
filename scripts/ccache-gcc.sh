#!/usr/bin/env bash
# ccache-gcc.sh ARGS...: gcc through ccache, the compiler of every kernel
# build of the kit (CC= of kernel_make, scripts/lib.sh).
#
# ccache's depend mode takes a file's headers from the dependency file that
# kbuild has gcc write anyway, instead of running the preprocessor first:
# stage 00 built through an empty cache in 6 min 12 s instead of 7 min
# 23 s on two cores (5 min 50 s without ccache; back to back, 5 December).
# But it never sees a file that the assembler pulls in with .incbin, so an
# object that embeds one can come from the cache with another build's file
# inside: ccache 4.7.5 served stage 00's compressed kernel in stage 02's
# bzImage (its piggy.o), a bug fixed by ccache's pull request 1765 (July
# 2026).  So assembler sources, and C sources that write .incbin in inline
# assembly (kernel/configs.c, kernel/kheaders.c), go through the default
# mode, which reads the preprocessed source and refuses to cache what
# .incbin pulls in.  The build still checks that its bzImage holds its
# vmlinux (bzimage_holds).
set -euo pipefail

mode=depend
for arg; do
	case "$arg" in
	*.S) mode=preprocessor ;;
	*.c) if [ -f "$arg" ] && grep -q incbin "$arg"; then mode=preprocessor; fi ;;
	esac
done
# Whatever mode the caller's environment asks for, this one.
unset CCACHE_DEPEND CCACHE_NODEPEND
if [ "$mode" = depend ]; then
	export CCACHE_DEPEND=true
else
	export CCACHE_NODEPEND=true
fi
exec ccache gcc "$@"
