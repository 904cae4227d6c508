#!/usr/bin/env bash
# Release archives of rollcall for krew, and its plugin manifest.
#
#   dist/release.sh [--out DIR] [--base-url URL] [--binary FILE] [TARGET...]
#
# For each TARGET (a Rust target triple; default: this machine's), builds
# `cargo build --release --locked --target TARGET`, packs
# DIR/kubectl-rollcall_vVERSION_OS_ARCH.tar.gz holding the binary under the
# plugin's name (kubectl-rollcall) and LICENSE, writes its sha256 beside it
# (ARCHIVE.sha256), and renders the manifest template dist/krew/rollcall.yaml
# into DIR/rollcall.yaml with one platform per archive.
#
#   --out DIR        where archives and the manifest go (default: target/dist)
#   --base-url URL   where the archives will be downloaded from (default: the
#                    GitHub release of the `repository` in Cargo.toml,
#                    REPOSITORY/releases/download/vVERSION)
#   --binary FILE    pack FILE for every TARGET instead of building (for tests
#                    of the packaging; a real release builds each target)
#
# Targets krew knows: x86_64/aarch64 Linux (gnu or musl) and macOS. A target
# other than the host needs its toolchain (`rustup target add`, a linker; for
# macOS, the SDK), so run this where every TARGET can be built. Windows is not
# supported: the binary uses Unix signals and process groups.
#
# Needs bash, cargo, tar, gzip and sha256sum (or shasum). Set SOURCE_DATE_EPOCH
# for reproducible archives (GNU tar) and build date.
set -euo pipefail

caller=$(pwd)
repo_root=$(cd "$(dirname "$0")/.." && pwd)

out=
base_url=
binary=
targets=()
while (($#)); do
    case "$1" in
        --out) out=${2:?--out needs a directory}; shift 2 ;;
        --base-url) base_url=${2:?--base-url needs a URL}; shift 2 ;;
        --binary) binary=${2:?--binary needs a file}; shift 2 ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        -*) echo "release.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
        *) targets+=("$1"); shift ;;
    esac
done

# Paths given are the caller's; the rest of the script runs in the repo.
absolute() { if [[ $1 == /* ]]; then echo "$1"; else echo "$caller/$1"; fi; }
if [[ -n $out ]]; then out=$(absolute "$out"); else out=$repo_root/target/dist; fi
if [[ -n $binary ]]; then binary=$(absolute "$binary"); fi
cd "$repo_root"

# A key of Cargo.toml's [package] table, e.g. version or repository.
package_key() {
    awk -v key="$1" '
        /^\[/ { in_package = ($0 == "[package]") }
        in_package && $1 == key && $2 == "=" {
            value = $0
            sub(/^[^=]*=[ \t]*"/, "", value)
            sub(/".*$/, "", value)
            print value
            exit
        }' Cargo.toml
}

version=$(package_key version)
repository=$(package_key repository)
[[ -n $version ]] || { echo "release.sh: no version in Cargo.toml" >&2; exit 2; }
[[ -n $repository ]] || { echo "release.sh: no repository in Cargo.toml" >&2; exit 2; }
base_url=${base_url:-$repository/releases/download/v$version}
base_url=${base_url%/}

if ((${#targets[@]} == 0)); then
    targets=("$(rustc -vV | sed -n 's/^host: //p')")
fi

# The krew platform (os arch) of a Rust target triple.
platform_of() {
    case "$1" in
        x86_64-unknown-linux-gnu|x86_64-unknown-linux-musl) echo "linux amd64" ;;
        aarch64-unknown-linux-gnu|aarch64-unknown-linux-musl) echo "linux arm64" ;;
        x86_64-apple-darwin) echo "darwin amd64" ;;
        aarch64-apple-darwin) echo "darwin arm64" ;;
        *) return 1 ;;
    esac
}

sha256_of() {
    if command -v sha256sum >/dev/null 2>&1; then
        sha256sum "$1" | cut -d' ' -f1
    else
        shasum -a 256 "$1" | cut -d' ' -f1
    fi
}

# Reproducible archives where GNU tar allows it: sorted names, no owner, one mtime.
tar_flags=()
if tar --version 2>/dev/null | grep -q 'GNU tar'; then
    tar_flags=(--sort=name --owner=0 --group=0 --numeric-owner)
    if [[ -n ${SOURCE_DATE_EPOCH:-} ]]; then
        tar_flags+=(--mtime="@$SOURCE_DATE_EPOCH")
    fi
fi

mkdir -p "$out"
platforms_file=$(mktemp)
stage=$(mktemp -d)
trap 'rm -rf "$platforms_file" "$stage"' EXIT

for target in "${targets[@]}"; do
    platform=$(platform_of "$target") || {
        echo "release.sh: krew has no platform for target $target" >&2
        exit 2
    }
    read -r os arch <<<"$platform"
    if [[ -n $binary ]]; then
        built=$binary
    else
        cargo build --release --locked --target "$target"
        built=${CARGO_TARGET_DIR:-target}/$target/release/rollcall
    fi
    [[ -f $built ]] || { echo "release.sh: no binary at $built" >&2; exit 2; }

    archive=kubectl-rollcall_v${version}_${os}_${arch}.tar.gz
    rm -rf "${stage:?}"/*
    cp "$built" "$stage/kubectl-rollcall"
    chmod 0755 "$stage/kubectl-rollcall"
    cp LICENSE "$stage/LICENSE"
    chmod 0644 "$stage/LICENSE"
    tar ${tar_flags[@]+"${tar_flags[@]}"} -C "$stage" -cf - kubectl-rollcall LICENSE | gzip -n -9 >"$out/$archive"
    sha=$(sha256_of "$out/$archive")
    echo "$sha  $archive" >"$out/$archive.sha256"
    echo "$os $arch $base_url/$archive $sha" >>"$platforms_file"
    echo "packed $out/$archive ($os/$arch, sha256 $sha)" >&2
done

# The template with the header's placeholders filled in and the lines between
# the PLATFORM markers repeated per archive. Literal replacement (no regex,
# no & in replacements): a URL may hold any character.
awk -v version="$version" -v homepage="$repository" -v platforms="$platforms_file" '
    function replace(text, from, to,    at, done) {
        done = ""
        while ((at = index(text, from)) > 0) {
            done = done substr(text, 1, at - 1) to
            text = substr(text, at + length(from))
        }
        return done text
    }
    /^[ \t]*# PLATFORM begin/ { in_block = 1; next }
    /^[ \t]*# PLATFORM end/ {
        while ((getline line < platforms) > 0) {
            split(line, field, " ")
            for (i = 1; i <= n; i++) {
                text = block[i]
                text = replace(text, "@OS@", field[1])
                text = replace(text, "@ARCH@", field[2])
                text = replace(text, "@URI@", field[3])
                text = replace(text, "@SHA256@", field[4])
                print text
            }
        }
        in_block = 0
        next
    }
    in_block { block[++n] = $0; next }
    /^#/ { next }
    {
        text = replace($0, "@VERSION@", version)
        print replace(text, "@HOMEPAGE@", homepage)
    }' dist/krew/rollcall.yaml >"$out/rollcall.yaml"

echo "wrote $out/rollcall.yaml (submit it to the krew index as plugins/rollcall.yaml)" >&2
