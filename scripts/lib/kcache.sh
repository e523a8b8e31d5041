# shellcheck shell=bash
# A cache entry is a directory whose MANIFEST (written last, by rename)
# lists the sha256 of the files that make it usable.  An entry without a
# MANIFEST was left partial (a build that died); one whose files no longer
# match it is corrupt.  Either is removed and built again, never used.
# Sourced by scripts/build-debug-kernel.sh and scripts/test-kcache.sh.

# kcache_seal DIR FILE...: write DIR/MANIFEST for FILEs (paths relative to
# DIR; a directory stands for every regular file under it)
kcache_seal() {
	local dir=$1
	shift
	(
		cd "$dir" &&
		find "$@" -type f -print0 | sort -z | xargs -0 sha256sum > MANIFEST.tmp &&
		[ -s MANIFEST.tmp ] &&
		mv MANIFEST.tmp MANIFEST
	)
}

# kcache_state DIR: "valid", "missing", "partial" (no MANIFEST) or
# "corrupt" (a file changed or gone since the seal)
kcache_state() {
	local dir=$1
	if [ ! -d "$dir" ]; then
		echo missing
	elif [ ! -s "$dir/MANIFEST" ]; then
		echo partial
	elif (cd "$dir" && sha256sum --quiet --strict -c MANIFEST > /dev/null 2>&1); then
		echo valid
	else
		echo corrupt
	fi
}
