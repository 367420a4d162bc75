// gocache - a Go service's heap under its garbage collector (issues 24 and
// 28): a cache of byte slices that fills, is churned (every entry replaced,
// several times over), shrinks to a quarter with the memory given back
// (debug.FreeOSMemory: the runtime's MADV_DONTNEED of its free spans) and
// grows again to half.
//
//	gocache [--size MiB] [--rounds N] [--progress FILE]
//
// Deterministic but for the runtime's own timing: a fixed seed, one
// goroutine doing the work, GOMAXPROCS 1 unless the environment says
// otherwise.  GOGC and GOMEMLIMIT, from the environment as for any Go
// program, decide when the collector runs (GOGC=off GOMEMLIMIT=L: only
// when the runtime's memory nears L, the setting of a service sized to its
// container).  Every byte of a slice is written (a fresh span from the
// kernel is zero, and Go would not touch it).  --progress FILE: the share
// of the work done, in thousandths, kept up to date in a shared mapping
// of FILE, which an OOM kill leaves behind.  Prints its smaps_rollup
// Anonymous and AnonHugePages at the end, as tests/progs/rollup.h does.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"
)

var rng uint64 = 0x9e3779b97f4a7c15

func next() uint64 {
	rng ^= rng << 13
	rng ^= rng >> 7
	rng ^= rng << 17
	return rng
}

// a size between 512 bytes and 64 KiB, small ones the most common
func entrySize() int {
	r := next()
	shift := 9 + r%8 // 512 B .. 64 KiB
	return int(1<<shift) + int((r>>8)%(1<<shift))/2
}

func newEntry(gen byte) []byte {
	b := make([]byte, entrySize())
	for i := range b {
		b[i] = gen
	}
	return b
}

type progressFile struct {
	mem         []byte
	done, total uint64
	last        uint64
}

func (p *progressFile) step() {
	p.done++
	if p.mem == nil {
		return
	}
	if pm := p.done * 1000 / p.total; pm != p.last {
		p.last = pm
		copy(p.mem, fmt.Sprintf("%d\n\x00", pm))
	}
}

func openProgress(path string) []byte {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0644)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gocache:", err)
		os.Exit(2)
	}
	defer f.Close()
	if err := f.Truncate(4096); err != nil {
		fmt.Fprintln(os.Stderr, "gocache:", err)
		os.Exit(2)
	}
	mem, err := syscall.Mmap(int(f.Fd()), 0, 4096, syscall.PROT_READ|syscall.PROT_WRITE,
		syscall.MAP_SHARED)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gocache:", err)
		os.Exit(2)
	}
	return mem
}

func rollup() {
	f, err := os.Open("/proc/self/smaps_rollup")
	if err != nil {
		return
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		l := s.Text()
		if strings.HasPrefix(l, "Anonymous:") || strings.HasPrefix(l, "AnonHugePages:") {
			fmt.Println(l)
		}
	}
}

func main() {
	size := flag.Int("size", 96, "the cache's size at its fullest, MiB")
	rounds := flag.Int("rounds", 3, "how many times every entry is replaced")
	progress := flag.String("progress", "", "a file for the share of the work done")
	flag.Parse()
	if *size < 1 || *rounds < 0 {
		fmt.Fprintln(os.Stderr, "gocache: --size must be at least 1, --rounds at least 0")
		os.Exit(2)
	}
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(1)
	}
	var p progressFile
	if *progress != "" {
		p.mem = openProgress(*progress)
	}
	limit := *size << 20
	// the number of entries that fill the cache, counted first on the
	// generator alone, so that the work's total is known for --progress
	saved := rng
	n, total := 0, 0
	for total < limit {
		total += entrySize()
		n++
	}
	rng = saved
	p.total = uint64(n + n**rounds + n/2)

	cache := make([][]byte, n)
	for i := range cache { // fill
		cache[i] = newEntry(1)
		p.step()
	}
	for r := 0; r < *rounds; r++ { // churn: every entry replaced, in a shuffled order
		for k := 0; k < n; k++ {
			i := int(next() % uint64(n))
			cache[i] = newEntry(byte(2 + r))
			p.step()
		}
	}
	// shrink to a quarter and give the memory back
	for i := n / 4; i < n; i++ {
		cache[i] = nil
	}
	debug.FreeOSMemory()
	for i := n / 4; i < n/4+n/2; i++ { // grow again to three quarters
		cache[i] = newEntry(0xff)
		p.step()
	}
	runtime.KeepAlive(cache)
	rollup()
}
