//go:build race

package gateway_test

// raceBuild tells the allocation guard that this binary runs under the
// race detector, whose sync.Pool drops a quarter of what is put back.
const raceBuild = true
