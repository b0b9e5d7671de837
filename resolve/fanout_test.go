package resolve

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestEachModule: every index is decided exactly once, never more than
// DefaultModulesAtOnce at a time (and that many when there is the work), and done
// counts one by one up to n.
func TestEachModule(t *testing.T) {
	for _, n := range []int{0, 1, DefaultModulesAtOnce - 1, DefaultModulesAtOnce, 10 * DefaultModulesAtOnce} {
		calls := make([]atomic.Int32, n)
		var now, most atomic.Int32
		release := make(chan struct{})
		var arrived sync.WaitGroup
		arrived.Add(min(n, DefaultModulesAtOnce))
		var first sync.Map
		var counts []int
		go func() {
			// Every worker holds a module: the bound is reached. Fewer
			// workers never all arrive; the count below then says so.
			all := make(chan struct{})
			go func() { arrived.Wait(); close(all) }()
			select {
			case <-all:
			case <-time.After(5 * time.Second):
			}
			close(release)
		}()
		eachModule(n, DefaultModulesAtOnce, func(i int) {
			calls[i].Add(1)
			in := now.Add(1)
			for {
				m := most.Load()
				if in <= m || most.CompareAndSwap(m, in) {
					break
				}
			}
			if i < min(n, DefaultModulesAtOnce) {
				if _, again := first.LoadOrStore(i, true); !again {
					arrived.Done()
				}
				<-release
			}
			now.Add(-1)
		}, func(done, total int) {
			if total != n {
				t.Errorf("n=%d: done reports a total of %d", n, total)
			}
			counts = append(counts, done)
		})
		for i := range calls {
			if c := calls[i].Load(); c != 1 {
				t.Errorf("n=%d: module %d decided %d times", n, i, c)
			}
		}
		if want := int32(min(n, DefaultModulesAtOnce)); most.Load() != want {
			t.Errorf("n=%d: %d modules at once, want %d", n, most.Load(), want)
		}
		for i, c := range counts {
			if c != i+1 {
				t.Fatalf("n=%d: done counted %v", n, counts)
			}
		}
		if len(counts) != n {
			t.Errorf("n=%d: done called %d times", n, len(counts))
		}
	}
}
