package daemon

import (
	"log/slog"
	"sync"

	"github.com/switchboardhq/switchboard/app/events"
	"github.com/switchboardhq/switchboard/app/gateway"
	"github.com/switchboardhq/switchboard/app/history"
	"github.com/switchboardhq/switchboard/app/record"
	"github.com/switchboardhq/switchboard/supervisor"
)

// forward records the supervisor's events in the history and publishes
// them on the live feed, until the subscription ends. The feed's text is
// redacted as the history's is. It is where the supervisor's events enter
// the app: each becomes the app's record.Event here, and nothing past it
// knows the supervisor's type.
func forward(log *slog.Logger, evs <-chan *supervisor.Event, hist *history.Store, bus *events.Bus, dropped *droppedFeed) {
	for sev := range evs {
		ev := appEvent(sev)
		hist.Observe(ev)
		switch ev.Kind {
		case record.EventLog:
			publish(log, bus, events.TypeLog, events.Log{Server: ev.Server, Time: ev.Time, PID: ev.PID,
				Stream: ev.Stream, Text: hist.RedactText(ev.Message)})
		case record.EventUsage:
			if u := ev.Usage; u != nil {
				publish(log, bus, events.TypeSample, events.Sample{Server: ev.Server, Time: ev.Time,
					CPUPercent: u.CPUPercent, RSSBytes: u.RSSBytes, Processes: u.Processes})
			}
		default:
			ev.Message = hist.RedactText(ev.Message) // a crash's message may quote the server
			publish(log, bus, events.TypeState, ev)
		}
		dropped.check(hist.Dropped())
	}
}

// appEvent is the supervisor's event ev as the app's: the same kind and
// state strings (the history keeps them, the feed publishes them), the
// same fields.
func appEvent(ev *supervisor.Event) record.Event {
	out := record.Event{Time: ev.Time, Server: ev.Server, Kind: record.EventKind(ev.Kind), PID: ev.PID, State: string(ev.State),
		Exit: ev.Exit, Message: ev.Message, Stream: ev.Stream, Delay: ev.Delay}
	if u := ev.Usage; u != nil {
		out.Usage = &record.Usage{CPUPercent: u.CPUPercent, RSSBytes: u.RSSBytes, Processes: u.Processes}
	}
	return out
}

// callFeed is the gateway's Recorder: calls are recorded in the history
// (whose commits publish them), and published as they start, so that the
// pages show calls while they run.
type callFeed struct {
	*history.Store
	log *slog.Logger
	bus *events.Bus
}

// CallStarted implements gateway.CallWatcher.
func (f callFeed) CallStarted(c record.Call) {
	ev := events.CallStart{Start: c.Start.UTC(), Server: c.Server, Endpoint: c.Endpoint,
		Method: c.Method, Name: c.Name, ClientLabel: c.ClientLabel, ClientName: c.ClientName, Session: c.Session, Tool: c.Tool}
	// The keys, the time and the quotes take about 160 bytes.
	size := 160 + len(c.Server) + len(c.Endpoint) + len(c.Method) + len(c.Name) + len(c.ClientLabel) + len(c.ClientName) + len(c.Session) + len(c.Tool)
	f.bus.PublishJSON(events.TypeCallStart, ev.AppendJSON(make([]byte, 0, size)))
}

// CallProgress implements gateway.CallWatcher.
func (f callFeed) CallProgress(c record.Call, p gateway.CallProgress) {
	publish(f.log, f.bus, events.TypeCallProgress, events.CallProgress{Start: c.Start.UTC(), Server: c.Server, Name: c.Name,
		Session: c.Session, Progress: p.Progress, Total: p.Total, Message: f.RedactText(p.Message)})
}

// droppedFeed publishes the history's dropped-records count when it has
// changed, so that the UI shows lost records without polling for them. It
// is given the count after every committed batch of calls (records are
// dropped when the queue is full, so under load, when batches commit all
// the time) and after every supervisor event (at least every 2 s while a
// server runs).
type droppedFeed struct {
	log *slog.Logger
	bus *events.Bus

	mu   sync.Mutex // the writer and the supervisor's events both check: counts go out in order
	last uint64     // the count last published
}

// check publishes n, the history's Dropped count, if it is news. The count
// only grows, so an older count that arrives late is not.
func (f *droppedFeed) check(n uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if n > f.last {
		f.last = n
		publish(f.log, f.bus, events.TypeDropped, events.Dropped{Count: n})
	}
}

// publish puts an event on the feed; the data types are the daemon's own,
// so a failure to encode one is a bug worth a log line, not an error path.
func publish(log *slog.Logger, bus *events.Bus, typ string, data any) {
	if _, err := bus.Publish(typ, data); err != nil {
		log.Error("publishing an event", "type", typ, "err", err)
	}
}
