//go:build !race

package postroom_test

const raceEnabled = false
