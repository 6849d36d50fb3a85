package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"

	"github.com/switchboardhq/switchboard/app/api/wire"
)

// An httpError is an error with the status code to answer it with. Handlers
// return it; anything else is a 500.
type httpError struct {
	status int
	msg    string
}

func (e *httpError) Error() string { return e.msg }

func errorf(status int, format string, args ...any) *httpError {
	return &httpError{status: status, msg: fmt.Sprintf(format, args...)}
}

// handle adapts a handler that returns (T, error) to http.Handler: it writes
// T as JSON with status ok, or the error as an ErrorResponse. A 204 status
// writes no body.
func handle[T any](fn func(*http.Request) (T, error), ok int) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v, err := fn(r)
		if err != nil {
			writeErr(w, err)
			return
		}
		if ok == http.StatusNoContent {
			w.WriteHeader(ok)
			return
		}
		writeJSON(w, ok, v)
	})
}

// available returns part, a part of the daemon the API was given, or when
// it was not (part is nil) a 503 that says so: what is the part's name with
// its verb ("the catalog is").
func available[T comparable](part T, what string) (T, error) {
	var none T
	if part == none {
		return none, errorf(http.StatusServiceUnavailable, "%s not available in this daemon", what)
	}
	return part, nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v) // the client may be gone; nothing to do then
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, wire.ErrorResponse{Error: msg})
}

func writeErr(w http.ResponseWriter, err error) {
	if he, ok := errors.AsType[*httpError](err); ok {
		writeError(w, he.status, he.msg)
		return
	}
	writeError(w, http.StatusInternalServerError, err.Error())
}

// decodeBody reads the JSON request body into dst. (Server.route limits the
// body to MaxBodyBytes.) Unknown fields are not refused: config.Server keeps
// them.
func decodeBody(r *http.Request, dst any) error { return decodeJSON(r, dst, false) }

// decodeStrictBody is decodeBody refusing a field dst does not have: for a
// request where a misspelt field would silently widen what it does (an
// approval without "tool" approves every held tool of the server).
func decodeStrictBody(r *http.Request, dst any) error { return decodeJSON(r, dst, true) }

func decodeJSON(r *http.Request, dst any, strict bool) error {
	dec := json.NewDecoder(r.Body)
	if strict {
		dec.DisallowUnknownFields()
	}
	bad := func(err error) error {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return errorf(http.StatusRequestEntityTooLarge, "request body is larger than %d bytes", MaxBodyBytes)
		}
		return nil
	}
	if err := dec.Decode(dst); err != nil {
		if e := bad(err); e != nil {
			return e
		}
		if errors.Is(err, io.EOF) {
			return errorf(http.StatusBadRequest, "request body is empty: expected a JSON object")
		}
		return errorf(http.StatusBadRequest, "invalid request body: %s", jsonProblem(err))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		if e := bad(err); e != nil {
			return e
		}
		return errorf(http.StatusBadRequest, "invalid request body: unexpected data after the JSON object")
	}
	return nil
}

// jsonProblem describes a decoding error for a user, without Go type names.
func jsonProblem(err error) string {
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return "the JSON ends too early"
	}
	if se, ok := errors.AsType[*json.SyntaxError](err); ok {
		return fmt.Sprintf("%s (at byte %d)", strings.TrimPrefix(se.Error(), "json: "), se.Offset)
	}
	if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok {
		want := "a JSON object"
		switch te.Type.Kind() {
		case reflect.String:
			want = "a string"
		case reflect.Bool:
			want = "true or false"
		case reflect.Int, reflect.Int64, reflect.Float64:
			want = "a number"
		case reflect.Slice:
			want = "an array"
		}
		if te.Field == "" {
			return fmt.Sprintf("expected %s, got %s", want, te.Value)
		}
		return fmt.Sprintf("%s: expected %s, got %s", te.Field, want, te.Value)
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}
