//go:build !race

package daemon

// raceBuild tells the allocation guard that this binary runs under the
// race detector, which allocates more (see raceAllocationAllowance).
const raceBuild = false
