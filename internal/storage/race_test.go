//go:build race

package storage

// raceEnabled lets timing assertions stand down under the race detector,
// which slows everything by an order of magnitude.
const raceEnabled = true
