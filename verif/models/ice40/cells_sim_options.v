// Read before yosys's iCE40 cell library (share/ice40/cells_sim.v): its ports' default values (`input RCLKE = 1'b1`)
// are SystemVerilog that Icarus 11 does not parse; every instance in rtl/prim/ connects all its ports.
`define NO_ICE40_DEFAULT_ASSIGNMENTS
