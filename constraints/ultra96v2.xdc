# Ultra96-V2 (Zynq UltraScale+ xczu3eg-sbva484-1-i) constraints for the target zynq-usplus
# (scripts/synth_targets.json). The open flow only estimates resources with yosys synth_xilinx; this file is
# for a user with Vivado. Keep the clock period equal to the target's oscillator MHz in synth_targets.json (the
# generic technology has no PLL: the core runs on clk_osc; scripts/synth.py checks it).
#
# On Ultra96-V2 the PL has no oscillator of its own: in a real system tt_accel (rtl/tt_accel.v) sits directly
# on the PS's AXI (M_AXI_HPM0_LPD, pl_clk0) in a block design, and Vivado derives the clock constraint; no pins.
# The synthesized top is rtl/tt_accel_pins.v (tt_accel behind an SPI-to-AXI4-Lite bridge), the same as on the
# other boards. For a stand-alone timing run use an out-of-context synthesis, where this create_clock is the
# only constraint that matters; the generics are the paper model's (print them with
# `python scripts/synth.py --target zynq-usplus` or golden's hdl_parameters):
#   synth_design -top tt_accel_pins -part xczu3eg-sbva484-1-i -mode out_of_context -generic BANK_SHIFT=15 ...
#   read_xdc constraints/ultra96v2.xdc; opt_design; place_design; route_design; report_timing_summary

# 200 MHz
create_clock -period 5.000 -name clk [get_ports clk_osc]

# The SPI pins and rst go through two-flip-flop synchronizers; done/error are registered: no board I/O timing.
set_false_path -from [get_ports {rst spi_sck spi_cs_n spi_mosi}]
set_false_path -to [get_ports {spi_miso done error}]

# Optional pin placement for an in-context build on the low-speed expansion header (bank 26, 1.8 V; HD_GPIO
# pin sites from Avnet's Ultra96-V2 reference constraints). The clock pin is not a global-clock pin, hence
# CLOCK_DEDICATED_ROUTE FALSE. Uncomment to use.
# set_property -dict {PACKAGE_PIN F7 IOSTANDARD LVCMOS18} [get_ports clk_osc]   ;# HD_GPIO_1
# set_property CLOCK_DEDICATED_ROUTE FALSE [get_nets clk_osc_IBUF]
# set_property -dict {PACKAGE_PIN F8 IOSTANDARD LVCMOS18} [get_ports rst]       ;# HD_GPIO_2
# set_property -dict {PACKAGE_PIN F6 IOSTANDARD LVCMOS18} [get_ports spi_cs_n]  ;# HD_GPIO_4
# set_property -dict {PACKAGE_PIN G5 IOSTANDARD LVCMOS18} [get_ports spi_mosi]  ;# HD_GPIO_5
# set_property -dict {PACKAGE_PIN A6 IOSTANDARD LVCMOS18} [get_ports spi_miso]  ;# HD_GPIO_6
# set_property -dict {PACKAGE_PIN B6 IOSTANDARD LVCMOS18} [get_ports spi_sck]   ;# HD_GPIO_7
# set_property -dict {PACKAGE_PIN A9 IOSTANDARD LVCMOS18} [get_ports done]      ;# RADIO_LED0 (D9)
# set_property -dict {PACKAGE_PIN B9 IOSTANDARD LVCMOS18} [get_ports error]     ;# RADIO_LED1 (D10)
