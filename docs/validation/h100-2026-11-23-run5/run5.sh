B=.device-bin/gpudoctor
python3 .device-bin/xid.py 8 > $OUT/xid.log 2>&1 &
X=$!
T0=$(date +%s%N)
$B stress --seconds 20 --format jsonl > $OUT/stress-xid.jsonl 2>&1
echo "stress exit $? after $(( ($(date +%s%N) - T0) / 1000000 )) ms" >> $OUT/summary.txt
wait $X
grep -c '"event":"sample"' $OUT/stress-xid.jsonl >> $OUT/summary.txt
grep '"event":"xid"' $OUT/stress-xid.jsonl >> $OUT/summary.txt
tail -1 $OUT/stress-xid.jsonl | python3 -c 'import json,sys; r=json.load(sys.stdin)["report"]; [print("finding", f["severity"], f["rule"], f["title"]) for f in r["findings"]]; w=r["snapshot"]["stress"]["gpus"][0]["watch"]; print("watch", {k: w.get(k) for k in ("samples","xids","unavailable","xids_unwatched","max_temperature_c")})' >> $OUT/summary.txt
$B stress --seconds 60 --format line > $OUT/sigterm.txt 2>&1 &
P=$!
sleep 12
T1=$(date +%s%N)
kill -TERM $P
wait $P
echo "SIGTERM at 12 s: exit $? after $(( ($(date +%s%N) - T1) / 1000000 )) ms" >> $OUT/summary.txt
$B check --format line >> $OUT/summary.txt 2>&1
cat $OUT/summary.txt
