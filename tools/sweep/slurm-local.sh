#!/usr/bin/env bash
# tools/sweep/slurm-local.sh start|stop DIR: a single-node Slurm cluster on
# this machine, for make check-slurm (Debian's slurm-wlm and munge).
#
# start: a munge key and munged on a socket of their own in DIR, a
# slurm.conf (one node: this machine, its CPUs, proctrack/linuxproc, no
# accounting, ports 16817-16818) and slurmctld and slurmd as local daemons
# writing their logs, state and pid files in DIR; waits until the node is
# idle.  Prints the SLURM_CONF to export.  stop: the daemons, by their pid
# files.  Nothing outside DIR is written; root is needed (slurmd runs the
# jobs as their user).
set -eu
cmd=${1:?usage: slurm-local.sh start|stop DIR}
d=$(readlink -f "${2:?usage: slurm-local.sh start|stop DIR}")
stop() {
	for p in slurmd slurmctld munged; do
		[ -s "$d/$p.pid" ] && kill "$(cat "$d/$p.pid")" 2>/dev/null || true
	done
	for _ in $(seq 50); do
		alive=0
		for p in slurmd slurmctld munged; do
			[ -s "$d/$p.pid" ] && kill -0 "$(cat "$d/$p.pid")" 2>/dev/null && alive=1
		done
		[ $alive = 0 ] && break
		sleep 0.1
	done
	rm -f "$d"/*.pid
}
if [ "$cmd" = stop ]; then
	stop
	exit 0
fi
mkdir -p "$d/state" "$d/spool"
chmod 700 "$d"
host=$(hostname -s)
cpus=$(nproc)
mem=$(awk '/^MemTotal:/ { print int($2 / 1024) - 512 }' /proc/meminfo)
dd if=/dev/urandom of="$d/munge.key" bs=128 count=1 2>/dev/null
chmod 400 "$d/munge.key"
munged --force --socket="$d/munge.sock" --key-file="$d/munge.key" \
	--log-file="$d/munged.log" --pid-file="$d/munged.pid" --seed-file="$d/munged.seed"
cat > "$d/slurm.conf" <<CONF
ClusterName=thpsim
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$d/munge.sock
CredType=cred/munge
SlurmctldPort=16817
SlurmdPort=16818
StateSaveLocation=$d/state
SlurmdSpoolDir=$d/spool
SlurmctldPidFile=$d/slurmctld.pid
SlurmdPidFile=$d/slurmd.pid
SlurmctldLogFile=$d/slurmctld.log
SlurmdLogFile=$d/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
ReturnToService=2
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MaxArraySize=100001
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=sweep Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF=$d/slurm.conf
slurmctld -c
slurmd
for _ in $(seq 100); do
	if sinfo -h -o %T 2>/dev/null | grep -q idle; then
		echo "SLURM_CONF=$SLURM_CONF"
		exit 0
	fi
	sleep 0.2
done
echo "slurm-local.sh: the node did not come up (see $d/slurmctld.log, $d/slurmd.log)" >&2
stop
exit 1
