// Package conntrust carries, in a request's context, how to tell the
// daemon's listener that the connection the request came on presented a
// valid token. The listener sheds connections that never did first when
// it is full (see app/daemon/limits.go); the API's authentication, which
// knows the token, says so.
package conntrust

import "context"

type key struct{}

// With returns ctx carrying trust, which marks the connection ctx's
// requests come on as trusted. The daemon's http.Server sets it as each
// connection's context (ConnContext).
func With(ctx context.Context, trust func()) context.Context {
	return context.WithValue(ctx, key{}, trust)
}

// Trust marks the connection of the request whose context is ctx as one
// that presented a valid token. Without a connection to mark (a server
// that is not the daemon's, as in the API's own tests) it does nothing.
func Trust(ctx context.Context) {
	if trust, ok := ctx.Value(key{}).(func()); ok {
		trust()
	}
}
