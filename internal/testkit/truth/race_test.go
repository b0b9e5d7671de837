//go:build race

package truth

func init() { raceEnabled = true }
