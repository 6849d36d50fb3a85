package config

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// A Duration is a time.Duration written in the file as a Go duration
// string: "90s", "10m", "1h30m", "500ms". Read it through the embedded
// field: d.Duration. The zero Duration means "not set; use the default" for
// every field of this package that has one.
//
// It is written in the shortest form Go's time.ParseDuration reads back:
// 10 minutes is "10m" (not "10m0s"), 90 seconds is "1m30s".
type Duration struct{ time.Duration }

// String returns d in the form it is written in the file, e.g. "10m".
func (d Duration) String() string { return formatDuration(d.Duration) }

// MarshalJSON writes d as a JSON string such as "10m".
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(formatDuration(d.Duration))
}

// UnmarshalJSON reads a JSON string accepted by time.ParseDuration. JSON
// null leaves d unchanged; anything else (a number, a malformed string) is an
// error. When the Duration is part of a config file, Parse reports the
// error as an *Error naming the field.
func (d *Duration) UnmarshalJSON(data []byte) error {
	if string(data) == "null" {
		return nil
	}
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return fmt.Errorf("invalid duration %s: expected %s", snippet(data), durationWant)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("invalid duration %q: expected %s", s, durationWant)
	}
	d.Duration = v
	return nil
}

const durationWant = `a duration string like "90s" or "10m"`

// formatDuration is time.Duration.String without trailing zero units.
func formatDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}
