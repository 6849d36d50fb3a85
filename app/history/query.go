package history

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/switchboardhq/switchboard/app/record"
)

// Call is one recorded call, as queries return it.
type Call struct {
	ID            int64         `json:"id"`
	Start         time.Time     `json:"start"`
	Duration      time.Duration `json:"duration"` // nanoseconds, stored to the microsecond
	ClientLabel   string        `json:"clientLabel"`
	ClientName    string        `json:"clientName"`
	ClientVersion string        `json:"clientVersion"`
	Session       string        `json:"session"`
	Endpoint      string        `json:"endpoint"`
	Server        string        `json:"server"`
	Method        string        `json:"method"`
	Name          string        `json:"name"`
	// Arguments are redacted and capped (see prepareArguments). Only Call
	// and Export fill them in; Calls leaves them out to keep pages small.
	Arguments    json.RawMessage `json:"arguments,omitempty"`
	Outcome      string          `json:"outcome"`
	Error        string          `json:"error,omitempty"`
	ResponseSize int             `json:"responseSize"`
	// ResponsePreview is the start of the response, at most PreviewLimit
	// bytes: it is cut JSON text, not necessarily valid JSON. Only Call and
	// Export fill it in.
	ResponsePreview string `json:"responsePreview,omitempty"`
	PID             int    `json:"pid,omitempty"`
	// Tier is a tool call's tool's tier when it was made (see
	// record.Call.Tier); "" for other methods and older calls.
	Tier string `json:"tier,omitempty"`
	// Tool is the tool (prompt, resource URI) as its server calls it,
	// whatever Name the client used (see record.Call.Tool); Unknown says
	// which of server and tool the gateway did not know (record's
	// UnknownServer, UnknownTool).
	Tool    string `json:"tool,omitempty"`
	Unknown string `json:"unknown,omitempty"`
	// DecidedBy, DecisionAllowed and DecidedAt are the user's answer when
	// the call had to be asked for (see record.Decision): who decided
	// (record.DecidedBy...), whether the call was allowed, and when.
	// DecidedBy is "" (and DecidedAt nil) when it was not asked for, and
	// for older calls.
	DecidedBy       string     `json:"decidedBy,omitempty"`
	DecisionAllowed bool       `json:"decisionAllowed,omitempty"`
	DecidedAt       *time.Time `json:"decidedAt,omitempty"`
}

// OutcomeError, as CallQuery.Outcome, matches every outcome but "ok".
const OutcomeError = "error"

// A CallQuery selects calls. Its zero value selects all calls, newest first.
type CallQuery struct {
	Server  string `json:"server,omitempty"`
	Tool    string `json:"tool,omitempty"`    // the tool (prompt, resource URI) as its server or as the client calls it
	Client  string `json:"client,omitempty"`  // the client's token label or its name
	Outcome string `json:"outcome,omitempty"` // one of gateway's outcomes, or OutcomeError
	// Since and Until bound the call's start: [Since, Until). Zero: unbounded.
	Since time.Time `json:"since,omitzero"`
	Until time.Time `json:"until,omitzero"`
	// Text is free text searched in the arguments, error and name. Each
	// whitespace-separated word must appear (as a phrase of its own tokens,
	// so "foo.txt" finds foo followed by txt); punctuation is never syntax.
	Text string `json:"text,omitempty"`
	// Cursor is CallPage.Next of the previous page; "" for the first.
	Cursor string `json:"cursor,omitempty"`
	// Limit is the page size (default 50, at most 1000). Export ignores it.
	Limit int `json:"limit,omitempty"`
}

// A CallPage is one page of calls, newest first.
type CallPage struct {
	Calls []Call `json:"calls"`
	// Next is the cursor of the following (older) page; "" on the last page.
	// Pages are keyed by (start, id), so calls recorded meanwhile with a
	// newer start never shift the older pages.
	Next string `json:"next,omitempty"`
}

// ErrBadCursor is returned for a cursor that no page produced.
var ErrBadCursor = errors.New("history: invalid cursor")

// ErrNotFound is returned by Call for an id with no call.
var ErrNotFound = errors.New("history: not found")

func encodeCursor(start, id int64) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(start, 36) + "." + strconv.FormatInt(id, 36)))
}

func decodeCursor(c string) (start, id int64, err error) {
	raw, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return 0, 0, ErrBadCursor
	}
	a, b, ok := strings.Cut(string(raw), ".")
	if !ok {
		return 0, 0, ErrBadCursor
	}
	start, err1 := strconv.ParseInt(a, 36, 64)
	id, err2 := strconv.ParseInt(b, 36, 64)
	if err1 != nil || err2 != nil {
		return 0, 0, ErrBadCursor
	}
	return start, id, nil
}

// ftsQuery turns user text into an FTS5 query that cannot be a syntax error:
// every word becomes a quoted string ("" inside doubled), and the strings are
// ANDed. It returns "" when text has no words. A NUL byte separates words:
// FTS5 reads a query string only up to one ("unterminated string", found by
// FuzzCallQuery).
func ftsQuery(text string) string {
	var b strings.Builder
	for _, w := range strings.FieldsFunc(text, func(r rune) bool { return unicode.IsSpace(r) || r == 0 }) {
		if !strings.ContainsFunc(w, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) {
			continue // all punctuation: no token to look for
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteByte('"')
		b.WriteString(strings.ReplaceAll(w, `"`, `""`))
		b.WriteByte('"')
	}
	return b.String()
}

// where builds the WHERE clause of q (without the cursor).
func (q CallQuery) where() (string, []any) { return q.whereAbove(0) }

// whereAbove is where, for calls with an id above minID only (0: all);
// the bound also narrows the free-text search to the index's newest part.
func (q CallQuery) whereAbove(minID int64) (string, []any) {
	var conds []string
	var args []any
	if q.Server != "" {
		conds, args = append(conds, "server = ?"), append(args, q.Server)
	}
	if q.Tool != "" {
		// "echo" finds alpha's echo through every endpoint; "alpha__echo"
		// the calls made under that name.
		conds, args = append(conds, "(tool = ? OR name = ?)"), append(args, q.Tool, q.Tool)
	}
	if q.Client != "" {
		conds, args = append(conds, "(client_label = ? OR client_name = ?)"), append(args, q.Client, q.Client)
	}
	switch q.Outcome {
	case "":
	case OutcomeError:
		conds = append(conds, "outcome <> 'ok'")
	case record.OutcomeOK:
		conds, args = append(conds, "outcome = ?"), append(args, q.Outcome)
	default:
		// A kind of failure: the failed calls' partial index
		// (calls_failed_start) serves it only when the query says so.
		conds, args = append(conds, "outcome = ? AND outcome <> 'ok'"), append(args, q.Outcome)
	}
	if !q.Since.IsZero() {
		conds, args = append(conds, "start >= ?"), append(args, q.Since.UnixMicro())
	}
	if !q.Until.IsZero() {
		conds, args = append(conds, "start < ?"), append(args, q.Until.UnixMicro())
	}
	if strings.TrimSpace(q.Text) != "" {
		if m := ftsQuery(q.Text); m != "" {
			if minID > 0 {
				conds, args = append(conds, "id IN (SELECT rowid FROM calls_fts WHERE calls_fts MATCH ? AND rowid > ?)"), append(args, m, minID)
			} else {
				conds, args = append(conds, "id IN (SELECT rowid FROM calls_fts WHERE calls_fts MATCH ?)"), append(args, m)
			}
		} else {
			conds = append(conds, "0") // text with no word matches nothing
		}
	}
	if minID > 0 {
		conds, args = append(conds, "id > ?"), append(args, minID)
	}
	return strings.Join(conds, " AND "), args
}

const listColumns = `id, start, duration_us, client_label, client_name, client_version, session, endpoint,
	server, method, name, outcome, error, response_size, pid, tier, tool, unknown,
	decided_by, decision_allowed, decided_at`

const fullColumns = listColumns + `, arguments, response_preview`

type scanner interface{ Scan(...any) error }

func scanCall(sc scanner, full bool) (Call, error) {
	var c Call
	var start, dur, decidedAt int64
	var decidedBy string
	var allowed bool
	dest := []any{&c.ID, &start, &dur, &c.ClientLabel, &c.ClientName, &c.ClientVersion, &c.Session,
		&c.Endpoint, &c.Server, &c.Method, &c.Name, &c.Outcome, &c.Error, &c.ResponseSize, &c.PID, &c.Tier, &c.Tool, &c.Unknown,
		&decidedBy, &allowed, &decidedAt}
	var args sql.NullString
	if full {
		dest = append(dest, &args, &c.ResponsePreview)
	}
	if err := sc.Scan(dest...); err != nil {
		return c, err
	}
	c.Start = time.UnixMicro(start).UTC()
	c.Duration = time.Duration(dur) * time.Microsecond
	if decidedBy != "" {
		at := time.UnixMicro(decidedAt).UTC()
		c.DecidedBy, c.DecisionAllowed, c.DecidedAt = decidedBy, allowed, &at
	}
	if args.Valid {
		c.Arguments = json.RawMessage(args.String)
	}
	return c, nil
}

// Calls returns one page of the calls q selects, newest first.
func (s *Store) Calls(ctx context.Context, q CallQuery) (CallPage, error) {
	limit := q.Limit
	if limit <= 0 {
		limit = 50
	}
	limit = min(limit, 1000)
	if err := s.searchable(ctx, q); err != nil {
		return CallPage{}, fmt.Errorf("history: calls: %w", err)
	}
	from, err := s.callsSource(ctx, q)
	if err != nil {
		return CallPage{}, fmt.Errorf("history: calls: %w", err)
	}
	if from == commonWordSource && q.Cursor == "" {
		if page, ok, err := s.recentMatches(ctx, q, limit); err != nil || ok {
			return page, err
		}
	}
	where, args := q.where()
	if q.Cursor != "" {
		start, id, err := decodeCursor(q.Cursor)
		if err != nil {
			return CallPage{}, err
		}
		where = strings.TrimPrefix(where+" AND (start < ? OR (start = ? AND id < ?))", " AND ")
		args = append(args, start, start, id)
	}
	page, _, err := s.page(ctx, from, where, args, limit)
	return page, err
}

// page runs one page's query: calls from from, matching where, newest
// first, limit of them and whether there are more; next is the first call of
// the next page, if any.
func (s *Store) page(ctx context.Context, from, where string, args []any, limit int) (_ CallPage, next Call, _ error) {
	rows, err := s.rdb().QueryContext(ctx, pageQuery(from, where, limit), args...)
	if err != nil {
		return CallPage{}, Call{}, fmt.Errorf("history: calls: %w", err)
	}
	defer rows.Close()
	page := CallPage{Calls: []Call{}}
	for rows.Next() {
		c, err := scanCall(rows, false)
		if err != nil {
			return CallPage{}, Call{}, err
		}
		page.Calls = append(page.Calls, c)
	}
	if err := rows.Err(); err != nil {
		return CallPage{}, Call{}, err
	}
	if len(page.Calls) > limit {
		next = page.Calls[limit]
		page.Calls = page.Calls[:limit]
		last := page.Calls[limit-1]
		page.Next = encodeCursor(last.Start.UnixMicro(), last.ID)
	}
	return page, next, nil
}

// pageQuery is the query of a page of calls from from, matching where,
// newest first: limit of them and the first of the next page.
func pageQuery(from, where string, limit int) string {
	query := "SELECT " + listColumns + " FROM " + from
	if where != "" {
		query += " WHERE " + where
	}
	return query + " ORDER BY start DESC, id DESC LIMIT " + strconv.Itoa(limit+1)
}

// commonWordSource is callsSource's answer for a word too common to sort
// all its matches.
const commonWordSource = "calls INDEXED BY calls_start"

// recentWindow is how many of the newest calls the first try of
// recentMatches searches; each further try searches eight times more.
const recentWindow = 20_000

// endSlack covers the jitter between a call's end and its place in the
// writer's queue (see recentMatches).
const endSlack = time.Second

// recentMatches answers the first page of a search for a common word from
// the newest part of the search index only, which spares building the set of
// every match (a tenth of a million calls for a common word).
//
// Ids are given in the order calls are queued, which is the order they end
// (the gateway records a call when it ends), so a call with an id at or
// below low ended by about the end of call low: its start cannot be later.
// A page whose every row, and the first row of the next page, started after
// that is the page a full search gives. Otherwise the window grows; ok is
// false when it would cover every call (the caller then searches them all).
func (s *Store) recentMatches(ctx context.Context, q CallQuery, limit int) (_ CallPage, ok bool, _ error) {
	var maxID int64
	if err := s.rdb().QueryRowContext(ctx, "SELECT coalesce(max(id), 0) FROM calls").Scan(&maxID); err != nil {
		return CallPage{}, false, fmt.Errorf("history: calls: %w", err)
	}
	window := int64(recentWindow)
	if s.opts.recentWindow > 0 {
		window = s.opts.recentWindow
	}
	for ; window < maxID; window *= 8 {
		low := maxID - window
		where, args := q.whereAbove(low)
		page, next, err := s.page(ctx, "calls", where, args, limit)
		if err != nil {
			return CallPage{}, false, err
		}
		if page.Next == "" {
			continue // not a full page in this window
		}
		var lowEnd int64
		err = s.rdb().QueryRowContext(ctx, "SELECT coalesce(max(start + duration_us), 0) FROM calls WHERE id <= ? AND id > ?",
			low, low-64).Scan(&lowEnd)
		if err != nil {
			return CallPage{}, false, fmt.Errorf("history: calls: %w", err)
		}
		if next.Start.UnixMicro() > lowEnd+endSlack.Microseconds() {
			return page, true, nil
		}
	}
	return CallPage{}, false, nil
}

// commonWord is the number of matches from which a free-text search walks
// calls newest first and probes the matches, rather than sorting them all.
const commonWord = 2000

// callsSource picks how a page of free text search reads calls. SQLite's
// plan looks up every match and sorts them by start: fine for a rare word,
// but a word in 10% of a million calls takes a quarter of a second. For a
// search with no other indexed filter, count the matches up to commonWord
// (cheap); at that many or more, walk the start index newest first instead,
// which reaches a page of matches after about limit/share rows.
func (s *Store) callsSource(ctx context.Context, q CallQuery) (string, error) {
	m := ftsQuery(q.Text)
	if m == "" || q.Server != "" || q.Tool != "" || q.Outcome != "" {
		return "calls", nil
	}
	var n int
	err := s.rdb().QueryRowContext(ctx, `SELECT count(*) FROM
		(SELECT rowid FROM calls_fts WHERE calls_fts MATCH ? LIMIT `+strconv.Itoa(commonWord)+`)`, m).Scan(&n)
	if err != nil {
		return "", err
	}
	if n >= commonWord {
		return commonWordSource, nil
	}
	return "calls", nil
}

// searchable brings the search index up to date before a query with free
// text reads it: the writer commits what is queued and adds the calls the
// index does not hold yet (see indexTail). Only the end of ctx is an
// error: a failed step (the writer logs it) or a closed store leaves the
// search to what the index holds.
func (s *Store) searchable(ctx context.Context, q CallQuery) error {
	if ftsQuery(q.Text) == "" {
		return nil
	}
	if err := s.flush(ctx, true); err != nil && ctx.Err() != nil {
		return ctx.Err()
	}
	return nil
}

// Call returns one call with its arguments and response preview.
func (s *Store) Call(ctx context.Context, id int64) (Call, error) {
	row := s.rdb().QueryRowContext(ctx, "SELECT "+fullColumns+" FROM calls WHERE id = ?", id)
	c, err := scanCall(row, true)
	if errors.Is(err, sql.ErrNoRows) {
		return Call{}, fmt.Errorf("%w: call %d", ErrNotFound, id)
	}
	return c, err
}

// A Stat summarises the calls of one server, or one tool of a server, over
// a window.
type Stat struct {
	Server    string        `json:"server"`
	Tool      string        `json:"tool,omitempty"` // set when grouped by tool
	Count     int64         `json:"count"`
	Errors    int64         `json:"errors"`    // calls whose outcome is not ok
	ErrorRate float64       `json:"errorRate"` // Errors / Count, 0..1
	P50       time.Duration `json:"p50"`       // nearest-rank percentiles of the duration
	P95       time.Duration `json:"p95"`
}

// Stats groups the calls that started in [since, until) (zero: unbounded)
// by "server" or by "tool" (a server's tool, prompt or resource name as the
// server calls it, whichever endpoint it was called through: Call.Tool), sorted
// by server then tool. Percentiles are nearest-rank: P95 is the smallest
// duration at least 95% of the calls did not exceed.
func (s *Store) Stats(ctx context.Context, since, until time.Time, groupBy string) ([]Stat, error) {
	var byTool bool
	switch groupBy {
	case "server", "":
	case "tool":
		byTool = true
	default:
		return nil, fmt.Errorf("history: stats: unknown grouping %q (want server or tool)", groupBy)
	}
	key := "server, ''"
	if byTool {
		key = "server, tool"
	}
	q := CallQuery{Since: since, Until: until}
	where, args := q.where()
	query := "SELECT " + key + ", duration_us, outcome <> 'ok' FROM calls"
	if where != "" {
		query += " WHERE " + where
	}
	query += " ORDER BY 1, 2, 3"
	rows, err := s.rdb().QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("history: stats: %w", err)
	}
	defer rows.Close()
	stats := []Stat{}
	var durs []int64
	finish := func() {
		if len(stats) == 0 {
			return
		}
		st := &stats[len(stats)-1]
		st.ErrorRate = float64(st.Errors) / float64(st.Count)
		st.P50 = time.Duration(percentile(durs, 50)) * time.Microsecond
		st.P95 = time.Duration(percentile(durs, 95)) * time.Microsecond
		durs = durs[:0]
	}
	for rows.Next() {
		var server, tool string
		var dur int64
		var failed bool
		if err := rows.Scan(&server, &tool, &dur, &failed); err != nil {
			return nil, err
		}
		if len(stats) == 0 || stats[len(stats)-1].Server != server || stats[len(stats)-1].Tool != tool {
			finish()
			stats = append(stats, Stat{Server: server, Tool: tool})
		}
		st := &stats[len(stats)-1]
		st.Count++
		if failed {
			st.Errors++
		}
		durs = append(durs, dur)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	finish()
	return stats, nil
}

// percentile is the nearest-rank p-th percentile of xs (sorted in place).
func percentile(xs []int64, p int) int64 {
	if len(xs) == 0 {
		return 0
	}
	slices.Sort(xs)
	rank := (p*len(xs) + 99) / 100 // ceil(p/100 * n)
	return xs[max(rank, 1)-1]
}

// LogLine is one line a server wrote.
type LogLine struct {
	ID     int64     `json:"id"`
	Time   time.Time `json:"time"`
	Server string    `json:"server"`
	PID    int       `json:"pid,omitempty"`
	Stream string    `json:"stream"`
	Text   string    `json:"text"`
}

// Logs returns the most recent limit lines (default 200, at most 10000) of
// server ("" for every server) written at or after since (zero: any time),
// oldest first.
func (s *Store) Logs(ctx context.Context, server string, since time.Time, limit int) ([]LogLine, error) {
	limit = clampLimit(limit, 200, 10000)
	where, args := serverSince("time", server, since)
	rows, err := s.rdb().QueryContext(ctx, `SELECT id, time, server, pid, stream, text FROM logs`+where+
		` ORDER BY time DESC, id DESC LIMIT `+strconv.Itoa(limit), args...)
	if err != nil {
		return nil, fmt.Errorf("history: logs: %w", err)
	}
	defer rows.Close()
	lines := []LogLine{}
	for rows.Next() {
		var l LogLine
		var t int64
		if err := rows.Scan(&l.ID, &t, &l.Server, &l.PID, &l.Stream, &l.Text); err != nil {
			return nil, err
		}
		l.Time = time.UnixMicro(t).UTC()
		lines = append(lines, l)
	}
	slices.Reverse(lines)
	return lines, rows.Err()
}

// Event is one lifecycle event of a server.
type Event struct {
	ID      int64            `json:"id"`
	Time    time.Time        `json:"time"`
	Server  string           `json:"server"`
	Kind    record.EventKind `json:"kind"`
	PID     int              `json:"pid,omitempty"`
	Exit    string           `json:"exit,omitempty"`
	Message string           `json:"message,omitempty"`
	State   string           `json:"state,omitempty"`
}

// Events returns the most recent limit events (default 200, at most 10000)
// of server ("" for every server) at or after since, oldest first.
func (s *Store) Events(ctx context.Context, server string, since time.Time, limit int) ([]Event, error) {
	limit = clampLimit(limit, 200, 10000)
	where, args := serverSince("time", server, since)
	rows, err := s.rdb().QueryContext(ctx, `SELECT id, time, server, kind, pid, exit, message, state FROM events`+where+
		` ORDER BY time DESC, id DESC LIMIT `+strconv.Itoa(limit), args...)
	if err != nil {
		return nil, fmt.Errorf("history: events: %w", err)
	}
	defer rows.Close()
	evs := []Event{}
	for rows.Next() {
		var e Event
		var t int64
		if err := rows.Scan(&e.ID, &t, &e.Server, &e.Kind, &e.PID, &e.Exit, &e.Message, &e.State); err != nil {
			return nil, err
		}
		e.Time = time.UnixMicro(t).UTC()
		evs = append(evs, e)
	}
	slices.Reverse(evs)
	return evs, rows.Err()
}

// Sample is a resource point of a server: a raw sample (Span 0), or the
// merge of the samples of one bucket of Span (downsampled).
type Sample struct {
	Time       time.Time     `json:"time"` // the sample's time, or its bucket's start
	Server     string        `json:"server"`
	CPUPercent float64       `json:"cpuPercent"` // average over the bucket
	RSSBytes   uint64        `json:"rssBytes"`   // maximum over the bucket
	Processes  int           `json:"processes"`  // maximum over the bucket
	Span       time.Duration `json:"span,omitempty"`
}

// Samples returns the points of server ("" for every server) in
// [since, until) (zero: unbounded), oldest first.
func (s *Store) Samples(ctx context.Context, server string, since, until time.Time) ([]Sample, error) {
	where, args := serverSince("time", server, since)
	if !until.IsZero() {
		if where == "" {
			where = " WHERE time < ?"
		} else {
			where += " AND time < ?"
		}
		args = append(args, until.UnixMicro())
	}
	rows, err := s.rdb().QueryContext(ctx, `SELECT time, server, cpu, rss, processes, span FROM samples`+where+
		` ORDER BY time, server`, args...)
	if err != nil {
		return nil, fmt.Errorf("history: samples: %w", err)
	}
	defer rows.Close()
	out := []Sample{}
	for rows.Next() {
		var p Sample
		var t, rss, span int64
		if err := rows.Scan(&t, &p.Server, &p.CPUPercent, &rss, &p.Processes, &span); err != nil {
			return nil, err
		}
		p.Time = time.UnixMicro(t).UTC()
		p.RSSBytes = uint64(rss)
		p.Span = time.Duration(span) * time.Microsecond
		out = append(out, p)
	}
	return out, rows.Err()
}

func serverSince(col, server string, since time.Time) (string, []any) {
	var conds []string
	var args []any
	if server != "" {
		conds, args = append(conds, "server = ?"), append(args, server)
	}
	if !since.IsZero() {
		conds, args = append(conds, col+" >= ?"), append(args, since.UnixMicro())
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}

func clampLimit(n, def, most int) int {
	if n <= 0 {
		return def
	}
	return min(n, most)
}

// TimeStat counts the calls that started in one bucket of a timeline.
type TimeStat struct {
	Time   time.Time     `json:"time"` // the bucket's start, on a clock boundary of the step
	Count  int64         `json:"count"`
	Errors int64         `json:"errors"`
	P50    time.Duration `json:"p50"` // nearest-rank, as in Stat; 0 for an empty bucket
	P95    time.Duration `json:"p95"`
}

// MaxTimeBuckets bounds the buckets of one timeline.
const MaxTimeBuckets = 5000

// Timeline counts the calls of server ("" for every server) in buckets of
// step from since (moved back to a multiple of step since the Unix epoch:
// a clock boundary, in UTC) to until, one TimeStat per bucket, empty buckets
// included, oldest first. SQLite does the counting and the percentiles, so
// the whole window is counted however many calls it holds.
func (s *Store) Timeline(ctx context.Context, server string, since, until time.Time, step time.Duration) ([]TimeStat, error) {
	if step < time.Second {
		return nil, fmt.Errorf("history: timeline: step %s is under a second", step)
	}
	stepUS := step.Microseconds()
	origin := time.UnixMicro(floorDiv(since.UnixMicro(), stepUS) * stepUS)
	if !until.After(origin) {
		return []TimeStat{}, nil
	}
	n := int((until.Sub(origin) + step - 1) / step)
	if n > MaxTimeBuckets {
		return nil, fmt.Errorf("history: timeline: %d buckets of %s from %s to %s (at most %d)", n, step, since.Format(time.RFC3339), until.Format(time.RFC3339), MaxTimeBuckets)
	}
	args := []any{origin.UnixMicro(), stepUS, origin.UnixMicro(), until.UnixMicro()}
	filter := ""
	if server != "" {
		filter = " AND server = ?"
		args = append(args, server)
	}
	// Nearest-rank percentiles in SQL: the row whose rank in its bucket,
	// by duration, is ceil(p/100 * n).
	rows, err := s.rdb().QueryContext(ctx, `
WITH c AS (
	SELECT (start - ?) / ? AS b, duration_us AS d, outcome <> 'ok' AS e
	FROM calls WHERE start >= ? AND start < ?`+filter+`
), r AS (
	SELECT b, d, e, ROW_NUMBER() OVER (PARTITION BY b ORDER BY d) AS rn, COUNT(*) OVER (PARTITION BY b) AS n FROM c
)
SELECT b, n, SUM(e),
	MAX(CASE WHEN rn = (50 * n + 99) / 100 THEN d END),
	MAX(CASE WHEN rn = (95 * n + 99) / 100 THEN d END)
FROM r GROUP BY b ORDER BY b`, args...)
	if err != nil {
		return nil, fmt.Errorf("history: timeline: %w", err)
	}
	defer rows.Close()
	out := make([]TimeStat, n)
	for i := range out {
		out[i].Time = origin.Add(time.Duration(i) * step).UTC()
	}
	for rows.Next() {
		var b, count, errs, p50, p95 int64
		if err := rows.Scan(&b, &count, &errs, &p50, &p95); err != nil {
			return nil, fmt.Errorf("history: timeline: %w", err)
		}
		if b < 0 || b >= int64(n) {
			continue
		}
		out[b] = TimeStat{Time: out[b].Time, Count: count, Errors: errs,
			P50: time.Duration(p50) * time.Microsecond, P95: time.Duration(p95) * time.Microsecond}
	}
	return out, rows.Err()
}

// floorDiv is a / b rounded down (b > 0), for times before the epoch too.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b < 0 {
		q--
	}
	return q
}
