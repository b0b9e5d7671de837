package lock

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// killChild, when set, makes TestSaveSurvivesKill the child: it saves two
// big locks in turn to the path it names, forever, until it is killed.
const killChild = "PIN_TEST_LOCK_KILL_CHILD"

// bigLock is a lock of n modules, each saying which of two versions it is,
// so that the two are the same size and differ everywhere.
func bigLock(which string, n int) *Lock {
	l := &Lock{}
	for i := range n {
		l.Modules = append(l.Modules, &Module{
			Name: fmt.Sprintf("module-%04d", i), Policy: "track-upstream",
			Image: fmt.Sprintf("registry.example.org/team-%d/service-%d", i%17, i),
			Tag:   "1.2." + which, Digest: "sha256:" + strings.Repeat(which, 64), Config: "sha256:" + strings.Repeat(which, 64),
			Version: "1.2." + which, Created: time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC),
			Source: SourceUpstream, Rule: "version", Reason: "the newest upstream tag, version " + which + strings.Repeat(".", 200),
			Observed: []Observation{{Host: "mesh-1", Container: fmt.Sprintf("svc-%d", i), Tag: "1.2." + which, Digest: "sha256:" + strings.Repeat(which, 64)}},
		})
	}
	return l
}

// TestSaveSurvivesKill kills a process that is saving locks, again and
// again (SIGKILL: no deferred cleanup runs), and checks after each kill
// that the lockfile is whole: byte for byte the old lock or the new one,
// never a mix, never missing, never empty. Half the kills land at a random
// moment of the save loop (mostly while the lock is formatted in memory);
// the other half land while a temporary file exists, i.e. during the write
// itself, at a random point of it.
func TestSaveSurvivesKill(t *testing.T) {
	const modules = 40 // about 100 KB
	if path := os.Getenv(killChild); path != "" {
		locks := []*Lock{bigLock("a", modules), bigLock("b", modules)}
		fmt.Println("ready")
		for i := 0; ; i++ {
			if _, err := Save(path, locks[i%2]); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(2)
			}
		}
	}
	// -short leaves it out on a laptop; under CI it always runs.
	if testing.Short() && os.Getenv("CI") == "" {
		t.Skip("kills a child process 40 times")
	}

	dir := t.TempDir()
	// The writer puts its temporary file next to the lock, never in
	// $TMPDIR: both are watched, to tell.
	tmp := filepath.Join(dir, "tmp")
	lockDir := filepath.Join(dir, "lock")
	for _, d := range []string{tmp, lockDir} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(lockDir, DefaultPath)
	a, b := Format(bigLock("a", modules)), Format(bigLock("b", modules))
	if _, err := Save(path, bigLock("a", modules)); err != nil {
		t.Fatal(err)
	}
	// temporaries lists the files that are not the lock.
	temporaries := func() map[string]bool {
		out := map[string]bool{}
		for _, d := range []string{tmp, lockDir} {
			entries, _ := os.ReadDir(d)
			for _, e := range entries {
				if e.Name() != DefaultPath {
					out[filepath.Join(d, e.Name())] = true
				}
			}
		}
		return out
	}

	const kills = 40
	outcome := map[string]int{}
	for i := range kills {
		cmd := exec.Command(os.Args[0], "-test.run=^TestSaveSurvivesKill$", "-test.count=1")
		cmd.Env = append(os.Environ(), killChild+"="+path, "TMPDIR="+tmp)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		line, err := bufio.NewReader(out).ReadString('\n')
		if err != nil || line != "ready\n" {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("child %d did not start: %q %v\n%s", i, line, err, stderr.String())
		}
		when := "at a random moment"
		if i%2 == 0 {
			time.Sleep(time.Duration(rand.IntN(400)) * time.Millisecond)
		} else {
			// Kill when a new temporary file shows: during the write.
			known := temporaries()
			for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); {
				found := false
				for f := range temporaries() {
					found = found || !known[f]
				}
				if found {
					when = "during a write"
					time.Sleep(time.Duration(rand.IntN(300)) * time.Microsecond)
					break
				}
			}
		}
		if err := cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		err = cmd.Wait()
		if cmd.ProcessState.Exited() {
			t.Fatalf("child %d exited on its own (%v) before it was killed:\n%s", i, err, stderr.String())
		}

		got, err := os.ReadFile(path)
		switch {
		case err != nil:
			t.Fatalf("after kill %d (%s): %v", i, when, err)
		case bytes.Equal(got, a):
			outcome[when+": lock a"]++
		case bytes.Equal(got, b):
			outcome[when+": lock b"]++
		default:
			t.Fatalf("after kill %d (%s): the lockfile is neither lock (%d bytes)", i, when, len(got))
		}
		if _, diags := Parse(got, path); diags.HasErrors() {
			t.Fatalf("after kill %d: %v", i, diags)
		}
	}
	t.Logf("after %d kills: %v", kills, outcome)
	if outcome["during a write: lock a"]+outcome["during a write: lock b"] < kills/4 {
		t.Errorf("too few kills landed during a write: %v", outcome)
	}
	if outcome["during a write: lock a"] == 0 || outcome["during a write: lock b"] == 0 {
		t.Errorf("the kills always left the same lock: %v", outcome)
	}
	// What the kills leave behind: temporary files, never a damaged lock.
	inTmp := 0
	for f := range temporaries() {
		if filepath.Dir(f) == tmp {
			inTmp++
		}
	}
	t.Logf("temporary files left: %d in $TMPDIR, %d next to the lock", inTmp, len(temporaries())-inTmp)
}
