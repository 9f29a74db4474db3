package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/monolock/monolock-bench/monolock/admin"
)

const usageAdmin = `usage: monolockctl locks   [flags] [MATCH]
       monolockctl show    [flags] NAME
       monolockctl release [flags] NAME
       monolockctl kick    [flags] NAME REMOTE_ADDR

Front ends to the server's admin API (monolock -admin-listen):
  locks    every lock with an owner or waiters; MATCH is a glob (* any run
           of characters, ? one character) on the whole name
  show     one lock: its holder and its queue in order (REMOTE_ADDR of
           each waiter, for kick)
  release  force-release: the owner gets ERROR 0x02 and is disconnected,
           the next waiter is promoted
  kick     remove the waiter connected from REMOTE_ADDR (ERROR 0x02); the
           others keep their order

Output is a table, or the server's JSON with -json. Exit status 0 on
success, 1 if the request failed (including "no such lock/owner/waiter"),
2 for bad flags or arguments. Flags go before the arguments.

Flags:
`

// adminTimeout bounds one admin request.
const adminTimeout = 10 * time.Second

func adminCommand(sub string, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet(sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(fs.Output(), usageAdmin); fs.PrintDefaults() }
	adminAddr := fs.String("admin", envOr(getenv, "MONOLOCK_ADMIN_ADDR", "127.0.0.1:7071"), "admin API `address`: host:port or an http(s):// URL (env MONOLOCK_ADMIN_ADDR)")
	asJSON := fs.Bool("json", false, "print the server's JSON instead of a table")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	base, err := adminBase(*adminAddr)
	if err != nil {
		return usageError(fs, "-admin: %v", err)
	}
	a := fs.Args()
	want := map[string][2]int{"locks": {0, 1}, "show": {1, 1}, "release": {1, 1}, "kick": {2, 2}}[sub]
	if len(a) < want[0] || len(a) > want[1] {
		return usageError(fs, "%s takes %s", sub, map[string]string{
			"locks": "at most one MATCH", "show": "one NAME", "release": "one NAME", "kick": "NAME and REMOTE_ADDR",
		}[sub])
	}
	if sub != "locks" && a[0] == "" {
		return usageError(fs, "empty lock NAME")
	}
	c := &adminClient{base: base, http: &http.Client{Timeout: adminTimeout}}
	var body []byte
	switch sub {
	case "locks":
		q := ""
		if len(a) == 1 {
			q = "?match=" + url.QueryEscape(a[0])
		}
		body, err = c.do(http.MethodGet, "/api/locks"+q)
	case "show":
		body, err = c.do(http.MethodGet, "/api/locks/"+url.PathEscape(a[0]))
	case "release":
		body, err = c.do(http.MethodPost, "/api/locks/"+url.PathEscape(a[0])+"/release")
	case "kick":
		body, err = c.do(http.MethodDelete, "/api/locks/"+url.PathEscape(a[0])+"/waiters/"+url.PathEscape(a[1]))
	}
	if err != nil {
		fmt.Fprintf(stderr, "monolockctl %s: %v\n", sub, err)
		return exitFailure
	}
	if *asJSON {
		var out bytes.Buffer
		if err := json.Indent(&out, body, "", "  "); err != nil {
			fmt.Fprintf(stderr, "monolockctl %s: server sent invalid JSON: %v\n", sub, err)
			return exitFailure
		}
		out.WriteByte('\n')
		stdout.Write(out.Bytes())
		return exitOK
	}
	if err := render(sub, a, body, stdout, time.Now()); err != nil {
		fmt.Fprintf(stderr, "monolockctl %s: %v\n", sub, err)
		return exitFailure
	}
	return exitOK
}

// adminBase turns host:port or a URL into a base URL without a trailing
// slash.
func adminBase(s string) (string, error) {
	if s == "" {
		return "", fmt.Errorf("empty address")
	}
	if !strings.Contains(s, "://") {
		s = "http://" + s
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", err
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return "", fmt.Errorf("%q is neither host:port nor an http(s) URL", s)
	}
	return strings.TrimSuffix(u.String(), "/"), nil
}

type adminClient struct {
	base string
	http *http.Client
}

// do sends one request and returns the body of a 2xx answer; any other
// status becomes an error carrying the server's {"error": ...} message.
func (c *adminClient) do(method, path string) ([]byte, error) {
	req, err := http.NewRequest(method, c.base+path, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("%s %s: reading the answer: %w", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		var e admin.Error
		if json.Unmarshal(body, &e) != nil || e.Error == "" {
			e.Error = strings.TrimSpace(string(body))
		}
		return nil, fmt.Errorf("%s: %s", resp.Status, e.Error)
	}
	return body, nil
}

// render prints an answer for a terminal.
func render(sub string, args []string, body []byte, w io.Writer, now time.Time) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	defer tw.Flush()
	switch sub {
	case "locks":
		var r admin.LockList
		if err := decode(body, &r); err != nil {
			return err
		}
		if len(r.Locks) == 0 {
			_, err := fmt.Fprintln(w, "no locks held or awaited")
			return err
		}
		fmt.Fprintln(tw, "NAME\tHOLDER\tIDENTITY\tTOKEN\tHELD\tLEASE\tWAITERS")
		for _, l := range r.Locks {
			if h := l.Holder; h != nil {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%d\n", quoteName(l.Name), h.RemoteAddr, dash(h.Identity), h.Token, age(now, h.Since), lease(h.LeaseMS), len(l.Waiters))
			} else {
				fmt.Fprintf(tw, "%s\t-\t-\t-\t-\t-\t%d\n", quoteName(l.Name), len(l.Waiters))
			}
		}
	case "show":
		var r admin.Lock
		if err := decode(body, &r); err != nil {
			return err
		}
		fmt.Fprintf(tw, "lock %s\n", quoteName(r.Name))
		fmt.Fprintln(tw, "POSITION\tREMOTE_ADDR\tIDENTITY\tTOKEN\tSINCE\tLEASE")
		if h := r.Holder; h != nil {
			fmt.Fprintf(tw, "holder\t%s\t%s\t%d\t%s ago\t%s\n", h.RemoteAddr, dash(h.Identity), h.Token, age(now, h.Since), lease(h.LeaseMS))
		} else {
			fmt.Fprintln(tw, "holder\t-\t-\t-\t-\t-")
		}
		for i, wt := range r.Waiters {
			fmt.Fprintf(tw, "%d\t%s\t%s\t-\t%s ago\t-\n", i+1, wt.RemoteAddr, dash(wt.Identity), age(now, wt.QueuedAt))
		}
	case "release":
		var r admin.Released
		if err := decode(body, &r); err != nil {
			return err
		}
		if !r.Released {
			return fmt.Errorf("server did not release %s", quoteName(args[0]))
		}
		fmt.Fprintf(tw, "released %s (owner's token %d); the next waiter, if any, is promoted\n", quoteName(args[0]), r.Token)
	case "kick":
		var r admin.Kicked
		if err := decode(body, &r); err != nil {
			return err
		}
		if !r.Kicked {
			return fmt.Errorf("server did not kick %s from %s", args[1], quoteName(args[0]))
		}
		fmt.Fprintf(tw, "kicked waiter %s from %s\n", args[1], quoteName(args[0]))
	}
	return nil
}

func decode(body []byte, v any) error {
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("server sent unexpected JSON: %w", err)
	}
	return nil
}

// quoteName quotes a lock name when it would be ambiguous in a table:
// names may hold spaces, tabs or non-printing characters.
func quoteName(name string) string {
	for _, r := range name {
		if r <= ' ' || r == '"' || r == 0x7f || !strconv.IsPrint(r) {
			return fmt.Sprintf("%q", name)
		}
	}
	return name
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// age is now − t, rounded for reading.
func age(now, t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := now.Sub(t)
	switch {
	case d < 0:
		d = 0
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	}
	return d.Round(100 * time.Millisecond).String()
}

func lease(ms int64) string { return (time.Duration(ms) * time.Millisecond).String() }
