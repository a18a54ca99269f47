package outbox_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// clockTick is Linux's USER_HZ, the unit of /proc's CPU times.
const clockTick = 10 * time.Millisecond

// serverCPU is the CPU time the PostgreSQL server of dsn has used: its
// postmaster's own and its reaped children's (the sessions that have
// ended), plus its live children's, from /proc. ok is false when the
// server's processes cannot be read (another machine's server).
func serverCPU(tb testing.TB, dsn string) (cpu time.Duration, ok bool) {
	tb.Helper()
	conn, err := pgx.Connect(tb.Context(), dsn)
	if err != nil {
		tb.Fatal(err)
	}
	var pid int
	err = conn.QueryRow(tb.Context(), `SELECT pg_backend_pid()`).Scan(&pid)
	conn.Close(context.WithoutCancel(tb.Context()))
	if err != nil {
		tb.Fatal(err)
	}
	self, ok := procStat(strconv.Itoa(pid))
	if !ok {
		return 0, false
	}
	postmaster := self.ppid
	pm, ok := procStat(strconv.Itoa(postmaster))
	if !ok {
		return 0, false
	}
	ticks := pm.utime + pm.stime + pm.cutime + pm.cstime
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		if st, ok := procStat(filepath.Base(d)); ok && st.ppid == postmaster {
			ticks += st.utime + st.stime
		}
	}
	return time.Duration(ticks) * clockTick, true
}

type stat struct{ ppid, utime, stime, cutime, cstime int }

// procStat reads /proc/<pid>/stat.
func procStat(pid string) (stat, bool) {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return stat{}, false
	}
	// The command name, in parentheses, may hold spaces: fields follow
	// the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return stat{}, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 15 {
		return stat{}, false
	}
	n := func(k int) int { v, _ := strconv.Atoi(string(f[k])); return v }
	// After the name: state(0) ppid(1) ... utime(11) stime(12) cutime(13) cstime(14).
	return stat{ppid: n(1), utime: n(11), stime: n(12), cutime: n(13), cstime: n(14)}, true
}
