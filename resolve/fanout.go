package resolve

import "sync"

// modulesAtOnce bounds how many modules are decided at once. It is not a
// user setting: the requests in flight to each registry are bounded by the
// registry client (pin's --concurrency), and modules beyond that wait on
// it; this bound only keeps goroutines and memory in step with it while
// leaving the registries enough work to stay busy.
const modulesAtOnce = 32

// eachModule calls f for every index of n modules, at most modulesAtOnce at
// a time, and returns when all have returned. done, when not nil, is called
// after each, with the number done, never concurrently.
func eachModule(n int, f func(i int), done func(done, total int)) {
	sem := make(chan struct{}, modulesAtOnce)
	var mu sync.Mutex
	finished := 0
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			f(i)
			if done != nil {
				mu.Lock()
				finished++
				done(finished, n)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
}
