package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"time"
)

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func formatBytes(n uint64) string {
	const mib = 1 << 20
	if n >= 1<<30 {
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/mib)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// moment is t as the history shows it, in local time, the way the
// dashboard does: the clock for today ("14:03:05"), the day before it
// otherwise ("Dec 1 14:03:05"), and the year when it is not this year
// ("2025-12-01 14:03:05").
func moment(t, now time.Time) string {
	t, now = t.Local(), now.Local()
	switch {
	case t.Year() != now.Year():
		return t.Format(time.DateTime)
	case t.YearDay() != now.YearDay():
		return t.Format("Jan 2 15:04:05")
	}
	return t.Format(time.TimeOnly)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-1] + "…"
}
