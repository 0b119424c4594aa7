#!/bin/bash
# Build a kernel variant: a base config plus config fragments (issue 6).
#
# The recipe, used by `make -C kernels variant` and by the harness
# (harness/orchestrate/kbuild.c runs it through the child-process module before a session
# starts). Steps:
#   1. source: a tree given with --source, or Debian's linux-source-<series>
#      (--series, default 6.1; 6.12 from bookworm-security; `apt-get download`
#      into kernels/cache/ once, unpacked once into
#      $CACHE/src/linux-source-<debian version>/);
#   2. cache key: SHA-256 of the recipe version, the source's identity, the base,
#      the compiler (gcc --version) and the text of every fragment in order;
#      $CACHE/kernels/<key>/kernel.json present = done, nothing else happens (a
#      cache hit takes well under 1 s);
#   3. config, out of tree in <source>/.sl-build-<key>/ for schedlab's own
#      source trees, $CACHE/build/<key>/ for a user's (below): the base (`make tinyconfig`
#      for "minimal", a distribution .config for "distro"), then the kernel's own
#      scripts/kconfig/merge_config.sh -m with base-<base>.config, the variant
#      fragments, then `make olddefconfig`; the release's suffix is given to
#      make as LOCALVERSION;
#   4. check that every option the base fragment and the variant fragments ask
#      for survived olddefconfig (it silently drops options whose dependencies
#      are missing); the first one that did not is named with its fragment;
#   5. `make -j<cpus> bzImage` (+ modules for "distro"), with ccache when
#      installed; one progress line per 100 objects on stderr, the full log in
#      build.log;
#   6. install vmlinuz, vmlinux (debug info stripped; qemu boots it through
#      PVH), config, build.log and kernel.json into a temporary folder renamed
#      to $CACHE/kernels/<key>/ at the end, so an interrupted build never looks
#      complete. The build tree is removed afterwards (ccache keeps the objects).
# $CACHE is ${XDG_CACHE_HOME:-$HOME/.cache}/schedlab. Concurrent builds of one
# key wait on a lock (flock).
#
# Usage: build-variant.sh [--series 6.1|6.12] [--base minimal|distro] [--source DIR]
#                         [--source-id ID] [--tag TAG] [--keep-tree]
#                         [--distro-config FILE] [--link DIR] [--jobs N]
#                         [--key-only] [--] FRAGMENT...
#        build-variant.sh [--series S] --fetch-source
# A FRAGMENT is a name from kernels/fragments/ (hz1000, sched_mc_off, ...) or
# the path of a .config fragment. Progress goes to stderr; the last line on
# stdout is the kernel folder. --link DIR also makes DIR/<base>-<fragments> a
# symlink to it. --key-only prints the cache key and exits (needs the source).
# --source-id ID stands for the source in the cache key instead of the
# tree's path, version and commit: the harness passes "git COMMIT [patches N
# SHA256]" for a kernel from git (harness/orchestrate/kgit.c), whose tree is
# schedlab's own checkout. --tag TAG goes into the label and so into the
# kernel release (6.1.192-sl-minimal-g0123456789ab-hz1000), so that the
# running kernel names its commit. --keep-tree builds in one build tree per
# source tree, base, fragments and compiler (.sl-build-tree-<hash>) that
# is kept after the build instead of a fresh one per key: the next build from
# the same tree (a git kernel's next commit, checked out in schedlab's clone,
# where only the changed files get new times) lets make rebuild what changed.
# Exit status: 0 built or cached, 2 bad usage or an unknown fragment, 3 an
# option did not survive olddefconfig or two fragments conflict, 4 the
# kernel did not compile (make bzImage failed: `schedlab bisect` skips such a
# commit), 1 anything else (the message and the tail of build.log say what).
set -euo pipefail

RECIPE=1
# called from make (make -C kernels variant): the kernel build is our own,
# with our -j and its normal output (progress lines), not the caller's -s
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES
here=$(cd "$(dirname "$0")" && pwd)
cache_root=${XDG_CACHE_HOME:-$HOME/.cache}/schedlab
debcache=$here/cache

say() { echo "kbuild: $*" >&2; }
die() { echo "build-variant: $1" >&2; exit "${2:-1}"; }

base=minimal source="" distro_config="" link="" jobs=$(nproc 2>/dev/null || echo 2)
key_only=0 fetch_only=0 source_id="" tag="" keep_tree=0 series=6.1
frags=()
while [ $# -gt 0 ]; do
	case "$1" in
	--base) base=${2:?}; shift 2 ;;
	--series) series=${2:?}; shift 2 ;;
	--source) source=${2:?}; shift 2 ;;
	--source-id) source_id=${2:?}; shift 2 ;;
	--tag) tag=${2:?}; shift 2 ;;
	--keep-tree) keep_tree=1; shift ;;
	--distro-config) distro_config=${2:?}; shift 2 ;;
	--link) link=${2:?}; shift 2 ;;
	--jobs) jobs=${2:?}; shift 2 ;;
	--key-only) key_only=1; shift ;;
	--fetch-source) fetch_only=1; shift ;;
	-h|--help) sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
	--) shift; frags+=("$@"); break ;;
	-*) die "unknown option $1" 2 ;;
	*) frags+=("$1"); shift ;;
	esac
done
case "$base" in minimal|distro) ;; *) die "--base: must be minimal or distro, not '$base'" 2 ;; esac
case "$jobs" in ''|*[!0-9]*) die "--jobs: must be a number" 2 ;; esac
case "$series" in [0-9]*.[0-9]*) ;; *) die "--series: a kernel series like 6.1 or 6.12, not '$series'" 2 ;; esac
case "$series" in *[!0-9.]*|*.*.*) die "--series: a kernel series like 6.1 or 6.12, not '$series'" 2 ;; esac
srcpkg=linux-source-$series

# --- 1. the source -------------------------------------------------------------
fetch_debian_source() {
	local deb
	deb=$(ls -1 "$debcache"/${srcpkg}_*_all.deb 2>/dev/null | sort -V | tail -n 1 || true)
	if [ -z "$deb" ]; then
		command -v apt-get >/dev/null || die "no $srcpkg package in $debcache and no apt-get"
		mkdir -p "$debcache"
		chmod 755 "$debcache" 2>/dev/null || true
		say "downloading $srcpkg (about 140 MB) into $debcache"
		(cd "$debcache" && apt-get download -q "$srcpkg" >&2) ||
			die "apt-get download $srcpkg failed (apt-get update? network? apt-cache policy $srcpkg)"
		deb=$(ls -1 "$debcache"/${srcpkg}_*_all.deb | sort -V | tail -n 1)
	fi
	echo "$deb"
}

if [ "$fetch_only" = 1 ]; then
	fetch_debian_source
	exit 0
fi
[ ${#frags[@]} -gt 0 ] || say "no fragments: building the $base base alone"

if [ -n "$source" ]; then
	[ -f "$source/Makefile" ] && [ -f "$source/scripts/kconfig/merge_config.sh" ] ||
		die "--source $source: not a kernel source tree (no Makefile or scripts/kconfig/merge_config.sh)" 2
	src=$(cd "$source" && pwd)
	ver=$(make -s -C "$src" kernelversion 2>/dev/null) || die "--source $src: make kernelversion failed"
	# a git tree is identified by its commit (and dirtiness), any other by its
	# path and version: edit a non-git tree and the cache will not notice
	if [ -n "$source_id" ]; then
		srcid="$source_id $ver"
	elif rev=$(git -C "$src" rev-parse HEAD 2>/dev/null); then
		git -C "$src" diff --quiet HEAD 2>/dev/null || rev="$rev-dirty"
		srcid="tree $src $ver git $rev"
	else
		srcid="tree $src $ver"
	fi
else
	deb=$(fetch_debian_source)
	debver=$(dpkg-deb -f "$deb" Version)
	src=$cache_root/src/linux-source-$debver
	if [ ! -f "$src/.schedlab-unpacked" ]; then
		say "unpacking $(basename "$deb") into $src"
		tmp=$cache_root/src/.unpack.$$
		rm -rf "$tmp" && mkdir -p "$tmp"
		dpkg-deb -x "$deb" "$tmp/deb"
		tar -C "$tmp" -xf "$tmp/deb/usr/src/$srcpkg.tar.xz"
		rm -rf "$tmp/deb" "$src"
		mv "$tmp/$srcpkg" "$src"
		rmdir "$tmp"
		touch "$src/.schedlab-unpacked"
	fi
	srcid="debian $srcpkg $debver"
fi

# --- 2. fragments and the cache key --------------------------------------------
files=("$here/base-$base.config") names=("base-$base")
for f in "${frags[@]}"; do
	if [ -f "$here/fragments/$f.config" ]; then
		files+=("$here/fragments/$f.config"); names+=("$f")
	elif [ -f "$f" ]; then
		files+=("$(cd "$(dirname "$f")" && pwd)/$(basename "$f")"); names+=("$f")
	else
		die "fragment '$f': no kernels/fragments/$f.config and no such file (known: $(cd "$here/fragments" && ls *.config | sed 's/\.config$//' | tr '\n' ' '))" 2
	fi
done

initial=""
if [ "$base" = distro ]; then
	if [ -z "$distro_config" ]; then
		dl=debian
		[ "$series" = 6.1 ] || dl=debian-$series
		for c in "$here/out/$dl/config" "/boot/config-$(uname -r)"; do
			[ -f "$c" ] && { distro_config=$c; break; }
		done
	fi
	[ -n "$distro_config" ] && [ -f "$distro_config" ] ||
		die "--base distro: no distribution config (make -C kernels debian SERIES=$series, or --distro-config FILE)" 2
	initial=$(sha256sum <"$distro_config" | cut -c1-64)
fi

key=$({
	printf 'schedlab-kernel-recipe %s\nsource %s\nbase %s\n' "$RECIPE" "$srcid" "$base"
	printf 'compiler %s\n' "$(gcc --version 2>/dev/null | head -n 1)"
	[ -z "$initial" ] || printf 'initial %s\n' "$initial"
	for i in "${!files[@]}"; do
		printf 'fragment %s\n' "$(basename "${names[$i]}")"
		cat "${files[$i]}"
	done
} | sha256sum | cut -c1-64)
if [ "$key_only" = 1 ]; then
	echo "$key"
	exit 0
fi

case "$tag" in *[!A-Za-z0-9_]*) die "--tag: letters, digits and _ only, not '$tag'" 2 ;; esac
label=$base${tag:+-$tag}
for f in "${frags[@]}"; do label="$label-$(basename "$f" .config)"; done
dest=$cache_root/kernels/$key

finish() {
	if [ -n "$link" ]; then
		mkdir -p "$link"
		ln -sfn "$dest" "$link/$label"
		say "linked $link/$label"
	fi
	echo "$dest"
	exit 0
}

if [ -f "$dest/kernel.json" ]; then
	say "cached: $label ($srcid) in $dest"
	finish
fi
mkdir -p "$cache_root/kernels" "$cache_root/build"
exec 9>"$cache_root/kernels/$key.lock"
if ! flock -n 9; then
	say "another build of $label is running; waiting for it"
	flock 9
fi
if [ -f "$dest/kernel.json" ]; then
	say "cached: $label (built meanwhile) in $dest"
	finish
fi

# --- 3. config -----------------------------------------------------------------
t0=$(date +%s)
# Where the build tree goes. For a source tree that is schedlab's own (Debian's,
# unpacked in $CACHE/src; a git kernel's clone in $CACHE/git) it is a direct
# subfolder of the source, .sl-build-*: the kernel's Makefile then names the
# source as ".." in every compiler command (srctree := ..), so the commands of
# two such trees are the same and ccache (hash_dir off) serves the objects one
# built to the other: a git kernel's first build from a clone of the sources
# a variant was built from is mostly cache hits. A tree of the user's is never
# written into: its builds go to $CACHE/build with absolute paths. The kernel's
# .gitignore (".*") and, for other trees, the clone's info/exclude keep the
# folder out of `git status` and `git clean`.
case "$src/" in
"$cache_root"/*)
	bldroot=$src
	if gx=$(git -C "$src" rev-parse --git-path info/exclude 2>/dev/null); then
		case "$gx" in /*) ;; *) gx=$src/$gx ;; esac
		mkdir -p "$(dirname "$gx")"
		grep -qxF '/.sl-build-*' "$gx" 2>/dev/null || echo '/.sl-build-*' >>"$gx"
	fi
	bldpfx=.sl-build- ;;
*) bldroot=$cache_root/build bldpfx="" ;;
esac
bld=$bldroot/$bldpfx$key
if [ "$keep_tree" = 1 ]; then
	# one tree per source tree and configuration input, whatever commit
	tkey=$({
		printf 'tree %s\nbase %s\ncompiler %s\ninitial %s\n' "$src" "$base" \
			"$(gcc --version 2>/dev/null | head -n 1)" "$initial"
		for i in "${!files[@]}"; do printf 'fragment %s\n' "$(basename "${names[$i]}")"; cat "${files[$i]}"; done
	} | sha256sum | cut -c1-16)
	bld=$bldroot/${bldpfx}tree-$tkey
	exec 8>"$bld.lock"
	if ! flock -n 8; then
		say "another build uses $bld; waiting for it"
		flock 8
	fi
	mkdir -p "$bld"
	rm -f "$bld/arch/x86/boot/bzImage" "$bld/vmlinux"
	say "reusing the build tree $bld (make rebuilds what changed)"
else
	rm -rf "$bld" && mkdir -p "$bld"
fi
log=$bld/build.log
: >"$log"
mk=(make -C "$src" O="$bld" -j"$jobs")
if command -v ccache >/dev/null; then
	mk+=(CC="ccache gcc" HOSTCC="ccache gcc")
	export CCACHE_BASEDIR=$cache_root CCACHE_NOHASHDIR=1
	say "ccache: on ($(ccache -k cache_dir 2>/dev/null))"
fi
run_logged() { # run a command, output to the log; on failure show its tail
	if ! "$@" >>"$log" 2>&1; then
		tail -n 25 "$log" >&2
		die "'$*' failed (log: $log)"
	fi
}

say "configuring $label from $srcid (base $base)"
if [ "$base" = minimal ]; then
	run_logged "${mk[@]}" tinyconfig
else
	cp "$distro_config" "$bld/.config"
fi
# the release names the variant: 6.1.192-sl-minimal-hz1000-sched_mc_off (the key
# when that gets long; the release may not exceed 64 characters)
lv="-sl-$label"
if [ ${#lv} -gt 40 ]; then
	# a git kernel keeps its commit in the release; others the key
	if [ -n "$tag" ]; then lv="-sl-$base-$tag"; else lv="-sl-$base-${key:0:12}"; fi
fi
# given to make as LOCALVERSION, not as CONFIG_LOCALVERSION: the config's
# value goes into autoconf.h, which every object includes, so each label
# would miss ccache for every file; LOCALVERSION reaches only the release
# (and, set, it keeps setlocalversion from adding "+" in a git tree)
printf 'CONFIG_LOCALVERSION=""\n# CONFIG_LOCALVERSION_AUTO is not set\n' >"$bld/schedlab-release.config"
mk+=(LOCALVERSION="$lv")
run_logged env KCONFIG_CONFIG="$bld/.config" "$src/scripts/kconfig/merge_config.sh" -m -O "$bld" \
	"$bld/.config" "${files[@]}" "$bld/schedlab-release.config"
run_logged "${mk[@]}" olddefconfig

# --- 4. did every requested option survive? --------------------------------------
# a fragment's last word on an option counts (later fragments win, as in
# merge_config.sh); two variant fragments that disagree are refused.
awk -v names="$(printf '%s\n' "${names[@]}")" '
function want(line, frag,   sym, val) {
	if (line ~ /^CONFIG_[A-Za-z0-9_]+=/) {
		sym = line; sub(/=.*/, "", sym); val = line; sub(/^[^=]*=/, "", val)
	} else if (line ~ /^# CONFIG_[A-Za-z0-9_]+ is not set/) {
		sym = line; sub(/^# /, "", sym); sub(/ .*/, "", sym); val = "n"
	} else return
	if (frag > 1 && (sym in from) && from[sym] > 1 && wanted[sym] != val) {
		printf "build-variant: fragments %s and %s conflict on %s (%s vs %s)\n",
			fname[from[sym]], fname[frag], sym, wanted[sym], val > "/dev/stderr"
		bad = 1
	}
	wanted[sym] = val; from[sym] = frag
}
BEGIN { n = split(names, fname, "\n"); bad = 0 }
FNR == 1 { fileno++ }
fileno <= nfrags { want($0, fileno); next }
/^CONFIG_[A-Za-z0-9_]+=/ { s = $0; sub(/=.*/, "", s); v = $0; sub(/^[^=]*=/, "", v); got[s] = v }
END {
	if (bad) exit 3
	for (s in wanted) {
		g = (s in got) ? got[s] : "n"
		if (g != wanted[s]) {
			printf "build-variant: %s=%s (from %s) did not survive olddefconfig: the result has %s\n",
				s, wanted[s], fname[from[s]], (s in got) ? s "=" g : "it unset" > "/dev/stderr"
			bad = 1
		}
	}
	exit bad ? 3 : 0
}' nfrags=${#files[@]} "${files[@]}" "$bld/.config" || {
	rc=$?
	[ $rc = 3 ] && die "config check failed for $label (config: $bld/.config)" 3
	die "config check failed"
}
say "config ok: every requested option is in $bld/.config"

# --- 5. build ------------------------------------------------------------------
targets=(bzImage)
[ "$base" = distro ] && targets+=(modules)
say "building ${targets[*]} with $jobs jobs (log: $log)"
progress() { # one line per 100 build steps ("  CC      kernel/sched/core.o")
	local n=0 line
	while IFS= read -r line; do
		printf '%s\n' "$line" >>"$log"
		case "$line" in
		"  "[A-Z]*) n=$((n + 1)); [ $((n % 100)) != 0 ] || say "$n steps, at ${line#  }" ;;
		esac
	done
}
if ! "${mk[@]}" "${targets[@]}" 2>&1 | progress; then
	grep -E 'error|Error' "$log" | tail -n 15 >&2 || true
	die "make ${targets[*]} failed (log: $log)" 4
fi

# --- 6. install ----------------------------------------------------------------
release=$("${mk[@]}" -s kernelrelease 2>/dev/null | tail -n 1)
tmp=$cache_root/kernels/.$key.tmp.$$
rm -rf "$tmp" && mkdir -p "$tmp"
cp "$bld/arch/x86/boot/bzImage" "$tmp/vmlinuz"
objcopy --strip-debug "$bld/vmlinux" "$tmp/vmlinux"
cp "$bld/.config" "$tmp/config"
cp "$log" "$tmp/build.log"
modules=""
if [ "$base" = distro ]; then
	run_logged "${mk[@]}" modules_install INSTALL_MOD_PATH="$tmp" INSTALL_MOD_STRIP=1
	modules="lib/modules/$release"
fi
secs=$(( $(date +%s) - t0 ))
jstr() { printf '"%s"' "$(printf '%s' "$1" | sed -e 's/\\/\\\\/g' -e 's/"/\\"/g')"; }
{
	printf '{"release": %s, "image": "vmlinuz", "vmlinux": "vmlinux", "config": "config",\n' "$(jstr "$release")"
	[ -z "$modules" ] || printf ' "modules": %s,\n' "$(jstr "$modules")"
	printf ' "source": %s, "base": %s, "variant": [' "$(jstr "$srcid")" "$(jstr "$base")"
	sep=""
	for f in "${frags[@]}"; do printf '%s%s' "$sep" "$(jstr "$(basename "$f" .config)")"; sep=", "; done
	printf '],\n "key": "%s", "config_sha256": "%s", "recipe": %s,\n' "$key" \
		"$(sha256sum <"$bld/.config" | cut -c1-64)" "$RECIPE"
	printf ' "built_at": "%s", "build_s": %s, "ccache": %s}\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
		"$secs" "$(command -v ccache >/dev/null && echo true || echo false)"
} >"$tmp/kernel.json"
rm -rf "$dest"
mv "$tmp" "$dest"
[ "$keep_tree" = 1 ] || rm -rf "$bld"
say "built $label: $release in ${secs} s ($(du -h "$dest/vmlinuz" | cut -f1) bzImage) in $dest"
finish
