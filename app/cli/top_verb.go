package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/switchboardhq/switchboard/app/api/client"
	"github.com/switchboardhq/switchboard/app/api/wire"
)

// topWindow is the span calls per second and errors are counted over.
const topWindow = time.Minute

func topVerb() verb {
	var once *bool
	return verb{
		name:    "top",
		noArgs:  true,
		summary: "a live view of the servers: state, CPU, memory, calls per second and errors",
		flags: func(fs *flag.FlagSet) {
			once = fs.Bool("once", false, "print one view and exit (for scripts)")
		},
		run: withClient(func(ctx context.Context, e *env, c *client.Client) error {
			v := newTopView()
			if err := v.load(ctx, c, time.Now()); err != nil {
				return err
			}
			if *once {
				_, err := e.stdout.Write(v.render(time.Now(), false))
				return err
			}
			err := v.follow(ctx, c, e.stdout, isTerminal(e.stdout))
			if ctx.Err() != nil {
				return nil // Ctrl-C ends top; that is not an error
			}
			return err
		}),
	}
}

// topView is what `switchboard top` shows: the servers as the API last
// listed them, with the latest samples and the calls of the last minute.
type topView struct {
	servers []wire.ServerView
	calls   map[string][]topCall // by server, oldest first
	lastID  uint64               // of the last event seen, to resume after
}

type topCall struct {
	start time.Time
	ok    bool
	dur   time.Duration
}

func newTopView() *topView { return &topView{calls: map[string][]topCall{}} }

// load takes a snapshot: the servers, and the calls of the last minute
// from the history.
func (v *topView) load(ctx context.Context, c *client.Client, now time.Time) error {
	servers, err := c.Servers(ctx)
	if err != nil {
		return err
	}
	v.servers = servers
	clear(v.calls)
	q := url.Values{"since": {now.Add(-topWindow).UTC().Format(time.RFC3339Nano)}, "limit": {"1000"}}
	for {
		page, err := c.History(ctx, q)
		if err != nil {
			var ae *client.APIError
			if errors.As(err, &ae) && ae.Status == 503 {
				return nil // a daemon without history: no call figures
			}
			return err
		}
		for _, call := range page.Calls {
			v.addCall(call)
		}
		if page.Next == "" {
			break
		}
		q.Set("cursor", page.Next)
	}
	for name := range v.calls {
		slices.SortFunc(v.calls[name], func(a, b topCall) int { return a.start.Compare(b.start) })
	}
	return nil
}

func (v *topView) addCall(c wire.Call) {
	v.calls[c.Server] = append(v.calls[c.Server], topCall{start: c.Start, ok: c.Outcome == wire.OutcomeOK, dur: c.Duration})
}

// apply updates the view with one event; it reports whether the server list
// must be fetched again.
func (v *topView) apply(ev wire.Event) (refetch bool) {
	if ev.ID != 0 {
		v.lastID = ev.ID
	}
	switch ev.Type {
	case wire.TypeReset, wire.TypeConfig, wire.TypeState:
		return true
	case wire.TypeSample:
		var s wire.SampleEvent
		if json.Unmarshal(ev.Data, &s) != nil {
			return false
		}
		for i := range v.servers {
			if v.servers[i].Name == s.Server {
				v.servers[i].Usage = &wire.Usage{CPUPercent: s.CPUPercent, RSSBytes: s.RSSBytes, Processes: s.Processes}
			}
		}
	case wire.TypeCall:
		var c wire.Call
		if json.Unmarshal(ev.Data, &c) == nil {
			v.addCall(c)
		}
	}
	return false
}

// render draws the view as of now; clear starts with the terminal codes
// that redraw the screen in place.
func (v *topView) render(now time.Time, clearScreen bool) []byte {
	var b bytes.Buffer
	if clearScreen {
		b.WriteString("\x1b[H\x1b[2J")
	}
	fmt.Fprintf(&b, "switchboard top — %s — calls and errors over the last minute\n\n", now.Local().Format(time.TimeOnly))
	if len(v.servers) == 0 {
		b.WriteString("No servers configured. Add one with `switchboard install` or in config.json.\n")
		return b.Bytes()
	}
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "NAME\tSTATE\tPROCS\tCPU\tRSS\tCALLS/S\tERRORS\tP50\t")
	for _, s := range v.servers {
		calls := v.recent(s.Name, now)
		errs, durs := 0, make([]time.Duration, 0, len(calls))
		for _, c := range calls {
			if !c.ok {
				errs++
			}
			durs = append(durs, c.dur)
		}
		cpu, rss, procs := "-", "-", "-"
		if s.Usage != nil {
			cpu, rss, procs = fmt.Sprintf("%.1f%%", s.Usage.CPUPercent), formatBytes(s.Usage.RSSBytes), fmt.Sprint(s.Usage.Processes)
		}
		p50 := "-"
		if len(durs) > 0 {
			slices.Sort(durs)
			p50 = durs[(len(durs)-1)/2].Round(10 * time.Microsecond).String()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%.2f\t%d\t%s\t\n", s.Name, s.ShownState(), procs, cpu, rss,
			float64(len(calls))/topWindow.Seconds(), errs, p50)
	}
	tw.Flush()
	return b.Bytes()
}

// recent drops the calls of server older than the window and returns the rest.
func (v *topView) recent(server string, now time.Time) []topCall {
	calls := v.calls[server]
	i := 0
	for i < len(calls) && now.Sub(calls[i].start) > topWindow {
		i++
	}
	v.calls[server] = calls[i:]
	return calls[i:]
}

// follow redraws the view every second from the event stream until ctx
// ends, reconnecting after the last event seen when the stream breaks.
func (v *topView) follow(ctx context.Context, c *client.Client, w io.Writer, terminal bool) error {
	evs := make(chan wire.Event, 256)
	streamErr := make(chan error, 1)
	start := func() {
		since := v.lastID
		go func() {
			streamErr <- c.Events(ctx, since, []string{wire.TypeCall, wire.TypeState, wire.TypeSample, wire.TypeConfig},
				func(ev wire.Event) error {
					select {
					case evs <- ev:
						return nil
					case <-ctx.Done():
						return ctx.Err()
					}
				})
		}()
	}
	start()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	draw := func() error {
		_, err := w.Write(v.render(time.Now(), terminal))
		return err
	}
	if err := draw(); err != nil {
		return err
	}
	refetch := false
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case ev := <-evs:
			refetch = v.apply(ev) || refetch
		case err := <-streamErr:
			if ctx.Err() != nil {
				return ctx.Err()
			}
			// The daemon cut the stream (a restart, or top fell behind):
			// resume after the last event, once a second at most.
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-tick.C:
			}
			if _, statusErr := c.Status(ctx); statusErr != nil {
				return fmt.Errorf("lost the daemon: %w (after %v)", statusErr, err)
			}
			start()
		case <-tick.C:
			if refetch {
				if servers, err := c.Servers(ctx); err == nil {
					v.servers, refetch = servers, false
				}
			}
			if err := draw(); err != nil {
				return err
			}
		}
	}
}

// isTerminal reports whether w is a terminal (a character device), where
// top redraws in place; elsewhere it prints one view after another.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
