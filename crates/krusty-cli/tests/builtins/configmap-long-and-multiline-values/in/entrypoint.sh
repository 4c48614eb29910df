#!/bin/sh
set -eu
echo "starting $APP_NAME"
exec "$@"
