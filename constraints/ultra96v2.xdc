# Ultra96-V2 (Zynq UltraScale+ xczu3eg-sbva484-1-i) constraints for the target zynq-usplus
# (scripts/synth_targets.json). The open flow only estimates resources with yosys synth_xilinx; this file is
# for a user with Vivado. Keep the clock period equal to the target's requested MHz in synth_targets.json
# (scripts/tests/test_synth_report.py checks it).
#
# On Ultra96-V2 the PL has no oscillator of its own: the accelerator is clocked from the PS (pl_clk0) and
# talks to it over AXI, so in a block design Vivado derives the clock constraint and no pins are needed.
# For a stand-alone timing run of the current top (rtl/tt_synth_probe.v, a measurement wrapper), use an
# out-of-context synthesis, where this create_clock is the only constraint that matters:
#   synth_design -top tt_synth_probe -part xczu3eg-sbva484-1-i -mode out_of_context \
#                -generic LANES=128 -generic RQ_LANES=8 -generic DEPTH=1024
#   read_xdc constraints/ultra96v2.xdc; opt_design; place_design; route_design; report_timing_summary

# 200 MHz
create_clock -period 5.000 -name clk [get_ports clk]

# Out-of-context runs: treat the wrapper's registered pins as internal (no board I/O timing).
set_false_path -from [get_ports {rst op[*] si[*]}]
set_false_path -to [get_ports {so[*]}]

# Optional pin placement for an in-context build of the wrapper on the low-speed expansion header
# (bank 26, 1.8 V; HD_GPIO pin sites from Avnet's Ultra96-V2 reference constraints). The clock pin is not a
# global-clock pin, hence CLOCK_DEDICATED_ROUTE FALSE. Uncomment to use.
# set_property -dict {PACKAGE_PIN F7 IOSTANDARD LVCMOS18} [get_ports clk]     ;# HD_GPIO_1
# set_property CLOCK_DEDICATED_ROUTE FALSE [get_nets clk_IBUF]
# set_property -dict {PACKAGE_PIN F8 IOSTANDARD LVCMOS18} [get_ports rst]     ;# HD_GPIO_2
# set_property -dict {PACKAGE_PIN F6 IOSTANDARD LVCMOS18} [get_ports op[0]]   ;# HD_GPIO_4
# set_property -dict {PACKAGE_PIN G5 IOSTANDARD LVCMOS18} [get_ports op[1]]   ;# HD_GPIO_5
# set_property -dict {PACKAGE_PIN A6 IOSTANDARD LVCMOS18} [get_ports op[2]]   ;# HD_GPIO_6
# set_property -dict {PACKAGE_PIN B6 IOSTANDARD LVCMOS18} [get_ports si[0]]   ;# HD_GPIO_7
# set_property -dict {PACKAGE_PIN G6 IOSTANDARD LVCMOS18} [get_ports si[1]]   ;# HD_GPIO_8
# set_property -dict {PACKAGE_PIN C7 IOSTANDARD LVCMOS18} [get_ports si[2]]   ;# HD_GPIO_13
# set_property -dict {PACKAGE_PIN A7 IOSTANDARD LVCMOS18} [get_ports si[3]]   ;# HD_GPIO_14
# set_property -dict {PACKAGE_PIN C5 IOSTANDARD LVCMOS18} [get_ports so[0]]   ;# HD_GPIO_15
# set_property -dict {PACKAGE_PIN A9 IOSTANDARD LVCMOS18} [get_ports so[1]]   ;# RADIO_LED0 (D9)
# set_property -dict {PACKAGE_PIN B9 IOSTANDARD LVCMOS18} [get_ports so[2]]   ;# RADIO_LED1 (D10)
# so[7:3] need five more 1.8 V pins of your choice (the header has HD_GPIO_0..15).
