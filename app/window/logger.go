//go:build desktop

package window

import (
	"fmt"
	"log/slog"
)

// wailsLogger sends Wails' own log lines to slog (Wails' logger.Logger
// interface; built with the window, the only user).
type wailsLogger struct{ log *slog.Logger }

func (l wailsLogger) Print(message string)   { l.log.Info(message) }
func (l wailsLogger) Trace(message string)   { l.log.Debug(message) }
func (l wailsLogger) Debug(message string)   { l.log.Debug(message) }
func (l wailsLogger) Info(message string)    { l.log.Info(message) }
func (l wailsLogger) Warning(message string) { l.log.Warn(message) }
func (l wailsLogger) Error(message string)   { l.log.Error(message) }
func (l wailsLogger) Fatal(message string) {
	// Wails calls Fatal and then exits itself; say so loudly first.
	l.log.Error(fmt.Sprintf("fatal: %s", message))
}
