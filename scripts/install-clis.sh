#!/usr/bin/env bash
# install-clis.sh — the hosted services' command-line tools whose own help
# proves the gate's hosted-delete labels (operator/hosted_test.go). Same
# options and cache as install-agents.sh (--path, --list, NAME…); only
# their help runs, never against a service.
#
# name      npm package  version   cache dir  bin
LASERKIT_NPM_TABLE="\
vercel    vercel       58.10.0   vercel     vercel
netlify   netlify-cli  27.10.2   netlify    netlify
supabase  supabase     2.117.0   supabase   supabase
heroku    heroku       11.10.0   heroku     heroku
wrangler  wrangler     3.114.17  wrangler   wrangler" \
	exec "$(dirname "$0")/install-agents.sh" "$@"
