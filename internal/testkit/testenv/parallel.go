package testenv

import (
	"flag"
	"strconv"
)

// parallelFlag is the testing package's flag behind go test -parallel.
const parallelFlag = "test.parallel"

// Parallel sets how many of a package's parallel tests run at once to n,
// unless the command line says (go test -parallel): for a package whose
// parallel tests mostly wait (on PostgreSQL, River's polling, processes of
// their own) rather than compute, so that more of them wait at once than
// go test's default, GOMAXPROCS, lets. It changes no test's outcome, only
// how many run together. Call it from TestMain, before the tests run:
//
//	func TestMain(m *testing.M) {
//		testenv.Parallel(8)
//		goleak.VerifyTestMain(pgtest.Main(m))
//	}
func Parallel(n int) {
	if !flag.Parsed() {
		flag.Parse()
	}
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == parallelFlag })
	if !given && flag.Lookup(parallelFlag) != nil {
		flag.Set(parallelFlag, strconv.Itoa(n))
	}
}
