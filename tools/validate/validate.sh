#!/bin/sh
# validate.sh BUILD_DIR [NAME...] - see validate.py and docs/validation.md.
exec python3 "$(dirname "$0")/validate.py" "$@"
