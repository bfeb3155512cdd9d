#!/bin/sh
# check_docs.sh: the user-facing docs (README.md, docs/, the public header)
# stand alone. They must not point at issues, at the project's shared
# folders or at notes outside the repository, and every docs/<name>.md they
# name must exist. Run by ctest (docs_self_contained) from any directory;
# the argument is the source root. Exits 1 listing each offending line.
root=${1:-.}
cd "$root" || exit 1
status=0

# References to material users do not have. "Issue 17: ..." headings count.
if grep -rnIE 'shared/|[Ii]ssues? #?[0-9]|session notes|gpu-and-timing' \
        README.md docs include; then
    echo "check_docs: the lines above point outside the repository (issues, shared/, notes)"
    status=1
fi

# Every docs page the docs name must be in the repository.
for page in $(grep -rhoIE 'docs/[A-Za-z0-9_.-]+\.md' README.md docs include | sort -u); do
    if [ ! -f "$page" ]; then
        echo "check_docs: $page is named in the docs but does not exist"
        status=1
    fi
done
exit $status
