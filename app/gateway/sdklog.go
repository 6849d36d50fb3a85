package gateway

import (
	"context"
	"log/slog"
)

// sdkLogger is the logger the go-sdk's servers and HTTP handlers get: the
// gateway's, with their Info records lowered to Debug. They log every
// session's connection, initialization and end at Info ("server session
// connected", "session initialized", ...): noise at the daemon's default
// level, and formatting those lines cost a session's setup several per
// cent of its time. Warnings and errors stay as they are.
func sdkLogger(log *slog.Logger) *slog.Logger {
	return slog.New(infoAsDebug{log.Handler()})
}

type infoAsDebug struct{ h slog.Handler }

func lowered(l slog.Level) slog.Level {
	if l == slog.LevelInfo {
		return slog.LevelDebug
	}
	return l
}

func (d infoAsDebug) Enabled(ctx context.Context, l slog.Level) bool {
	return d.h.Enabled(ctx, lowered(l))
}

func (d infoAsDebug) Handle(ctx context.Context, r slog.Record) error {
	r.Level = lowered(r.Level)
	return d.h.Handle(ctx, r)
}

func (d infoAsDebug) WithAttrs(attrs []slog.Attr) slog.Handler {
	return infoAsDebug{d.h.WithAttrs(attrs)}
}

func (d infoAsDebug) WithGroup(name string) slog.Handler {
	return infoAsDebug{d.h.WithGroup(name)}
}
