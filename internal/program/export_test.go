package program

// Test-only exports.

// ExtraHelpers returns the names of postroom's own helpers (those beyond
// raymond's built-ins), each with the function that computes its value from
// its evaluated arguments. The evaluator calls the same functions; tests use
// them to register equivalent helpers on raymond templates. The map is new
// on each call and owned by the caller.
func ExtraHelpers() map[string]func(args []any) (any, error) {
	m := make(map[string]func(args []any) (any, error))
	for _, s := range helperTable[hUpper:] {
		m[s.name] = s.fn
	}
	return m
}
