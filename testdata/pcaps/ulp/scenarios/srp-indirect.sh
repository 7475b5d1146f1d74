# srp-small.sh with ib_srp loaded with register_always=0: the initiator then uses the
# protection domain's global R_Key instead of registering each command's memory, so a
# scatter/gather list of several pages that are not contiguous goes out as an SRP_CMD with an
# indirect data buffer descriptor (its partial memory descriptor list in the IU) instead of one
# direct descriptor (drivers/infiniband/ulp/srp/ib_srp.c, srp_map_data).
source /lab/guest/scenarios/srp-small.sh
eval "small_$(declare -f scenario_client)"
scenario_client() {
  modprobe ib_srp register_always=0
  cat /sys/module/ib_srp/parameters/register_always
  small_scenario_client
}
