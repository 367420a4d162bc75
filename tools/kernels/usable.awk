# usable.awk /proc/zoneinfo /proc/buddyinfo: the free memory a user page
# may take, per zone what /proc/buddyinfo counts less the zone's min
# watermark and its lowmem_reserve against the movable zones (the
# protection tuple's largest: __zone_watermark_ok with highest_zoneidx
# ZONE_MOVABLE), taken from that zone's smallest free blocks, a block
# larger than what is left to take split.  Prints the usable MiB, then
# the free blocks of each order (thpsim replay --free-blocks).  Used by
# tools/kernels/init's "Global pressure" and its by-hand measurement
# tools/kernels/extra/global-pressure.sh; busybox awk.
FNR == 1 { f++ }
f == 1 && $1 == "Node" { z = $4 }
f == 1 && $1 == "min" && !(z in wm) { wm[z] = $2 }
f == 1 && $1 == "protection:" { p = 0
	for (i = 2; i <= NF; i++) { v = $i; gsub(/[(),]/, "", v); if (v + 0 > p) p = v + 0 }
	wm[z] += p }
f == 2 && $1 == "Node" { z = $4; d = wm[z] + 0; if (NF - 4 > n) n = NF - 4
	p = 1  # 2^o: busybox awk has no ^
	for (o = 0; o + 5 <= NF; o++) { k[o] = $(o + 5); b[o] = p; p *= 2 }
	for (o = 0; o + 5 <= NF && d > 0; o++)
		while (k[o] > 0 && d > 0) {
			k[o]--
			if (b[o] > d) { r = b[o] - d  # the rest of a split block
				for (j = 0; j < o; j++) { if (r % 2) k[j]++; r = int(r / 2) } }
			d -= b[o] }
	for (o = 0; o + 5 <= NF; o++) c[o] += k[o] }
END { t = 0
      for (o = 0; o < n; o++) t += c[o] * b[o]
      s = c[0]; for (o = 1; o < n; o++) s = s "," c[o]
      print int(t / 256), s }
