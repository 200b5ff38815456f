package launcher

import (
	"os"
	"testing"
)

// BenchmarkReadRules: init's read rules with a private home, walking
// beside the home itself (walk, as before) or given the server's walk
// (given: a look at each entry).
func BenchmarkReadRules(b *testing.B) {
	home, err := os.UserHomeDir()
	if err != nil || home == "/" {
		b.Skip("no home")
	}
	beside, _ := BesideHome(home)
	for _, bc := range []struct {
		name string
		p    Plan
	}{
		{"walk", Plan{Home: home, Landlock: true}},
		{"given", Plan{Home: home, Landlock: true, HomeBeside: beside}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				readRules(bc.p)
			}
		})
	}
}
