package resolve

import (
	"sync"
	"sync/atomic"
)

// DefaultModulesAtOnce bounds how many modules are decided at once when
// Input.ModulesAtOnce is zero. It is not a user setting: the requests in
// flight to each registry are bounded by the registry client (pin's
// --concurrency), and modules beyond that wait on it; this bound only
// keeps goroutines and memory in step with it while leaving the
// registries enough work to stay busy.
const DefaultModulesAtOnce = 32

// atOnce is how many modules in decides at once.
func (in Input) atOnce() int {
	if in.ModulesAtOnce > 0 {
		return in.ModulesAtOnce
	}
	return DefaultModulesAtOnce
}

// eachModule calls f for every index of n modules, in order, on at most
// atOnce goroutines, and returns when all have returned. done, when not
// nil, is called after each, with the number done, never concurrently.
//
// The goroutines are workers that take the next index until none is left,
// not one goroutine per module: a module's decision runs deep (HTTP, TLS,
// JSON), and a new goroutine's stack grows to that depth by copying, again
// for every module (9% of a warm 1,100-module resolve's CPU was
// runtime.newstack); a worker's stack grows once.
func eachModule(n, atOnce int, f func(i int), done func(done, total int)) {
	var next atomic.Int64
	var mu sync.Mutex
	finished := 0
	var wg sync.WaitGroup
	for range min(n, max(1, atOnce)) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				f(i)
				if done != nil {
					mu.Lock()
					finished++
					done(finished, n)
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
}
