//go:build race

package postroom_test

// raceEnabled says the race detector is on: it multiplies memory, so a
// test that measures memory skips.
const raceEnabled = true
