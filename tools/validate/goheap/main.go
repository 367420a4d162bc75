// goheap: a Go heap that grows, churns under the collector and shrinks,
// for docs/validation.md ("Real runtimes"): 64 generations of 256 KiB
// buffers kept in a ring, so the collector frees and the heap is reused,
// then everything dropped and returned to the OS.
package main

import (
	"fmt"
	"runtime/debug"
)

func main() {
	ring := make([][]byte, 512)
	sum := 0
	for gen := 0; gen < 64; gen++ {
		for i := range ring {
			if (i+gen)%3 == 0 {
				b := make([]byte, 256<<10)
				for j := 0; j < len(b); j += 4096 {
					b[j] = byte(gen)
				}
				ring[i] = b
			}
		}
		sum += len(ring[gen%len(ring)])
	}
	ring = nil
	debug.FreeOSMemory()
	fmt.Println(sum)
}
