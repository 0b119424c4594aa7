/*
 * schedlab serve: the store as a live site (docs/serve.md). Parses its
 * options, loads the token, opens the database (read-only without a token)
 * and runs harness/serve until SIGINT or SIGTERM; the pages and the checks
 * of every write are harness/serve's.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/cli/cmd.h"
#include "harness/cli/options.h"
#include "harness/serve/serve.h"
#include "workloads/workload.h"

static const char usage_text[] =
	"usage: schedlab serve [--db FILE] [--listen ADDR[:PORT]] [--token-file FILE]\n"
	"                      [--out-dir DIR] [--bisect-minutes M] [--public-url URL]\n"
	"                      [--workers N] [--page-seconds S] [--page-max-mb M]\n"
	"                      [--max-connections N] [--per-address N] [--header-seconds S]\n"
	"\n"
	"Serve the store over HTTP until interrupted (docs/serve.md): the plans and\n"
	"machines with their latest nights and open alerts (/), sessions and runs\n"
	"(/sessions, /session/N, /run/N), trends (/trend?metric=W.M&where=SEL),\n"
	"comparisons (/compare?a=SEL&b=SEL), alerts (/alerts, /alert/N); each page also\n"
	"as JSON (Accept: application/json or ?format=json); report's pages\n"
	"(/report?a=SEL&b=SEL, /bisect/N). Prints the address it listens on.\n"
	"\n"
	"  --listen ADDR[:PORT]\n"
	"                      default 127.0.0.1:8080; port 0 takes a free one, none\n"
	"                      8080; [::1]:PORT for IPv6; beyond loopback (0.0.0.0,\n"
	"                      [::]) a warning: other machines can reach the site\n"
	"  --token-file FILE   mode 0600, its first line the token (16+ characters):\n"
	"                      alerts can then be triaged (ack, expect, invalid, reopen)\n"
	"                      by a POST with the token; without it the site is\n"
	"                      read-only and the database is opened read-only. Checked\n"
	"                      again at each write: a new token is taken; the file\n"
	"                      removed or opened to others stops the writes (503)\n"
	"  --out-dir DIR       a bisection started from an alert's page runs\n"
	"                      `schedlab alerts bisect N --out-dir DIR`; its log in\n"
	"                      DIR/serve (default: both in FILE.serve beside the store)\n"
	"  --bisect-minutes M  its budget (default: alerts bisect's)\n"
	"  --public-url URL    the origin the site is reached at, http(s)://HOST[:PORT]\n"
	"                      (https://lab.example behind a TLS proxy): its Host and\n"
	"                      Origin are taken besides serve's own\n"
	"Limits (no request waits for another's page; docs/serve.md \"Limits\"):\n"
	"  --workers N         pages built at once, each on a read-only connection of\n"
	"                      its own (default 4); heavy pages (/report, /compare,\n"
	"                      /trend, /bisect/N) on half of them at most, beyond: 503\n"
	"  --page-seconds S    a page's time budget (default 30): past it 503, saying\n"
	"                      what it would cost\n"
	"  --page-max-mb M     a page's size bound (default 16): a larger one is 422,\n"
	"                      asking for a narrower range\n"
	"  --max-connections N connections at once (default 512)\n"
	"  --per-address N     connections at once from one address (default 128;\n"
	"                      behind a proxy every one is the proxy's)\n"
	"  --header-seconds S  a request's headers must be in within S seconds of\n"
	"                      the connection's start or its previous request (a\n"
	"                      slowloris is closed then); also the idle timeout\n"
	"                      (default 10)\n"
	"Exit status: 0 stopped by SIGINT/SIGTERM, 2 bad input.\n";

static struct {
	const char *listen;
	const char *token_file;
	const char *out_dir; /* --out-dir: the bisections' folder */
	size_t bisect_minutes;
	const char *public_url;
	size_t workers, page_seconds, page_max_mb, max_connections, per_address, header_seconds;
	char *token; /* --token-file's, loaded by parse; freed by the work */
} args;

int cmd_serve_parse(int argc, char **argv, struct cmd_ctx *ctx)
{
	memset(&args, 0, sizeof(args));
	args.listen = "127.0.0.1:8080";
	const struct cli_opt opts[] = {
		CLI_DB(&ctx->dbpath), CLI_STR("listen", &args.listen),
		CLI_STR("token-file", &args.token_file), CLI_STR("out-dir", &args.out_dir),
		CLI_RANGE("bisect-minutes", &args.bisect_minutes, 1, 100000),
		CLI_STR("public-url", &args.public_url),
		CLI_RANGE("workers", &args.workers, 1, 64),
		CLI_RANGE("page-seconds", &args.page_seconds, 1, 3600),
		CLI_RANGE("page-max-mb", &args.page_max_mb, 1, 4096),
		CLI_RANGE("max-connections", &args.max_connections, 1, 100000),
		CLI_RANGE("per-address", &args.per_address, 1, 100000),
		CLI_RANGE("header-seconds", &args.header_seconds, 1, 3600), CLI_END,
	};
	int first, rc = cli_parse("serve", usage_text, opts, argc, argv, &first);
	if (rc != CLI_OK)
		return cli_parse_exit(rc);
	if (cli_no_args("serve", argc, argv, first))
		return 2;
	struct strbuf err = STRBUF_INIT;
	char origin[300], host[300];
	if (args.public_url && serve_parse_public_url(args.public_url, origin, host, &err)) {
		cmd_error("serve", "%s", err.buf);
		strbuf_release(&err);
		return 2;
	}
	if (args.token_file && serve_token_load(args.token_file, &args.token, NULL, &err)) {
		cmd_error("serve", "%s", err.buf);
		strbuf_release(&err);
		return 2;
	}
	strbuf_release(&err);
	/* a write needs the token: without one the store is opened read-only;
	   serve never makes a database */
	ctx->flags = args.token ? CMD_DB_RW : CMD_DB_RO;
	ctx->db_existing = 1;
	return CMD_GO;
}

int cmd_serve(struct cmd_ctx *ctx)
{
	const char *listen = args.listen;
	char *token = args.token;
	struct strbuf err = STRBUF_INIT;
	/* the signals are taken by sigwait below: blocked before the server's
	   thread starts, so that it inherits the mask and never takes them */
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	struct serve_opts so = { .db = ctx->db, .listen = listen, .token = token,
				 .token_file = args.token_file,
				 .range_param = workload_range_param, .dbpath = ctx->dbpath,
				 .out_dir = args.out_dir, .bisect_minutes = args.bisect_minutes,
				 .public_url = args.public_url, .workers = (unsigned)args.workers,
				 .page_seconds = (unsigned)args.page_seconds,
				 .page_max_mb = (unsigned)args.page_max_mb,
				 .max_connections = (unsigned)args.max_connections,
				 .per_address = (unsigned)args.per_address,
				 .header_seconds = (unsigned)args.header_seconds };
	struct serve *s;
	if (serve_start(&so, &s, &err)) {
		cmd_error("serve", "%s", err.buf);
		strbuf_release(&err);
		free(token);
		return 2;
	}
	if (serve_public(s))
		fprintf(stderr, "schedlab serve: warning: listening on %s: the site is reachable "
				"from other machines%s\n", listen,
			token ? "; the token crosses the network in clear text with every write: "
				"put serve behind TLS (a reverse proxy) or reach it through an ssh "
				"tunnel"
			      : " (read-only: anyone who reaches it reads every page)");
	const char *pub = serve_public_origin(s);
	printf("schedlab serve: %s on %s (%s%s%s%s)\n", ctx->dbpath, serve_url(s),
	       token ? "triage with the token of --token-file" : "read-only",
	       pub ? "; reached at " : "", pub ? pub : "", pub ? "/" : "");
	fflush(stdout);
	int sig = 0;
	sigwait(&set, &sig);
	serve_stop(s);
	free(token);
	strbuf_release(&err);
	printf("schedlab serve: stopped (%s)\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
	return cmd_finish(0);
}
