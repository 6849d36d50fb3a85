package history

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// CSVHeader is the first row of a CSV export; the columns of Call, in order.
var CSVHeader = []string{"id", "start", "duration_us", "client_label", "client_name", "client_version",
	"session", "endpoint", "server", "method", "name", "arguments", "outcome", "error",
	"response_size", "response_preview", "pid", "tool", "unknown"}

// Export writes every call q selects (its Cursor and Limit ignored), newest
// first, with arguments and response preview, to w as "jsonl" (one Call
// object a line) or "csv" (CSVHeader, then a row a call; times RFC 3339 UTC;
// text cells that a spreadsheet would run as a formula are escaped, see
// csvText).
// It streams: memory use does not grow with the number of calls.
func (s *Store) Export(ctx context.Context, q CallQuery, w io.Writer, format string) error {
	if format != "jsonl" && format != "csv" {
		return fmt.Errorf("history: export: unknown format %q (want jsonl or csv)", format)
	}
	q.Cursor, q.Limit = "", 0
	if err := s.searchable(ctx, q); err != nil {
		return fmt.Errorf("history: export: %w", err)
	}
	where, args := q.where()
	query := "SELECT " + fullColumns + " FROM calls"
	if where != "" {
		query += " WHERE " + where
	}
	query += " ORDER BY start DESC, id DESC"
	rows, err := s.rdb().QueryContext(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("history: export: %w", err)
	}
	defer rows.Close()
	bw := bufio.NewWriterSize(w, 64<<10)
	var emit func(Call) error
	switch format {
	case "jsonl":
		enc := json.NewEncoder(bw)
		enc.SetEscapeHTML(false)
		emit = func(c Call) error { return enc.Encode(c) }
	case "csv":
		cw := csv.NewWriter(bw)
		if err := cw.Write(CSVHeader); err != nil {
			return err
		}
		emit = func(c Call) error {
			cw.Write([]string{strconv.FormatInt(c.ID, 10), c.Start.Format(time.RFC3339Nano),
				strconv.FormatInt(c.Duration.Microseconds(), 10), csvText(c.ClientLabel), csvText(c.ClientName),
				csvText(c.ClientVersion), csvText(c.Session), csvText(c.Endpoint), csvText(c.Server),
				csvText(c.Method), csvText(c.Name), csvText(string(c.Arguments)), csvText(c.Outcome),
				csvText(c.Error), strconv.Itoa(c.ResponseSize), csvText(c.ResponsePreview), strconv.Itoa(c.PID),
				csvText(c.Tool), c.Unknown})
			cw.Flush()
			return cw.Error()
		}
	}
	for rows.Next() {
		c, err := scanCall(rows, true)
		if err != nil {
			return err
		}
		if err := emit(c); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	return bw.Flush()
}

// csvText escapes a text cell of a CSV export against formula injection
// (OWASP "CSV Injection"): a cell that begins with =, +, -, @, a tab or a
// carriage return is run as a formula by spreadsheets, and its text comes
// from clients and servers (a tool name, an error, a response). Such a cell
// gets a leading single quote, which spreadsheets show as text. Cells of
// numbers Switchboard writes itself (ids, durations, sizes) are left alone.
func csvText(s string) string {
	if s != "" && strings.IndexByte("=+-@\t\r", s[0]) >= 0 {
		return "'" + s
	}
	return s
}
