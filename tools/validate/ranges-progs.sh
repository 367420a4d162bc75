# The real programs of docs/validation.md, "Real runtimes": . tools/validate/ranges-progs.sh
PY='/usr/bin/python3 -c "d={i:str(i)*3 for i in range(400000)}
b=[bytearray(3000) for _ in range(3000)]
del d
import os
if os.fork()==0:
    l=list(range(2000000)); os._exit(0)
os.wait()"'
SQ='sqlite3 :memory: "create table t(a,b); with recursive c(x) as (select 1 union all select x+1 from c where x<400000) insert into t select x, randomblob(64) from c; select count(*) from t;"'
PL="perl -e 'my %h; \$h{\$_} = \"x\" x 40 for 1..300000; print scalar(keys %h), qq(\n)'"
ND='node -e "const a=[]; for(let i=0;i<1e6;i++) a.push({i, s: \"x\"+i}); console.log(a.length)"'
GO='/tmp/goheap'   # go build -o /tmp/goheap ./tools/validate/goheap (Debian's golang-go)
RD='d=$(mktemp -d); redis-server --port 6399 --save "" --appendonly no --dir $d --daemonize no >/dev/null & sleep 0.5; redis-benchmark -p 6399 -q -n 100000 -r 100000 -d 200 -t set >/dev/null; redis-cli -p 6399 bgsave >/dev/null; sleep 1; redis-cli -p 6399 shutdown nosave >/dev/null; wait; rm -rf $d'
