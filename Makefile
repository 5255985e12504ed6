# Developer shortcuts; CI runs .ci/run.
FUZZTIME ?= 10m

# Every native fuzz target, as package:target.
FUZZ_TARGETS = \
	./layers:FuzzParser \
	./layers:FuzzRoundTrip \
	./layers:FuzzFastPath \
	./layers:FuzzBTHLayout \
	./layers:FuzzPSNWindow \
	./layers:FuzzNVMeCapsules \
	./layers:FuzzRPCRDMA \
	./layers:FuzzISER \
	./layers:FuzzMACControl \
	./layers:FuzzMirror \
	./layers:FuzzSMBDirect \
	./capture:FuzzReader \
	./capture:FuzzReadAt \
	./internal/ibdumpcli:FuzzParseFrames \
	./dfilter:FuzzCompile \
	./decode:FuzzAnalyze \
	./decode:FuzzNVMeAnalyze \
	./decode:FuzzNVMeData \
	./decode:FuzzRPCRDMAAnalyze \
	./decode:FuzzRPCRDMAChunksAnalyze \
	./decode:FuzzISERAnalyze \
	./fuzz:FuzzPipeline \
	./endpoint:FuzzEndpoint \
	./endpoint:FuzzCMPassive \
	./setup:FuzzParsePingpongDest \
	./setup:FuzzParsePerftestDest \
	./endpoint:FuzzPacketWireParseFrame \
	./endpoint:FuzzICRCVerify \
	./replay:FuzzRewrite \
	./replay:FuzzDescribe \
	./replay:FuzzParseRules \
	./internal/tui:FuzzFieldSpans

.PHONY: test fuzz bench

test:
	go test -race ./...

# make fuzz [FUZZTIME=10m] [FUZZMINIMIZETIME=200x]: run each target in turn for
# FUZZTIME, minimizing a new input for at most FUZZMINIMIZETIME (.ci/fuzz-one.sh
# says why: an unbounded minimization stops a short run's fuzzing).
fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; \
		echo "== $$pkg $$name ($(FUZZTIME))"; \
		.ci/fuzz-one.sh $$pkg $$name $(FUZZTIME); \
	done

bench:
	bench/ibdump-vs-tshark.sh

# make interop [S='name|glob ...'] [XFAIL='glob ...']: Linux rdma_rxe in QEMU guests, against each other
# and against ibpeer, captured with ibdump -i and checked with ibdump --check (root; interop/README.md).
.PHONY: interop
interop:
	set -f; XFAIL='$(XFAIL)' interop/run.sh $(or $(S),all)

# make interop-samples: run interop/samples.sh and keep the captures in pcaps/rxe/interop/.
.PHONY: interop-samples
interop-samples:
	interop/keep-samples.sh
