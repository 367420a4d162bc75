module goheap

go 1.19
