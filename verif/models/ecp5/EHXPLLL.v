`default_nettype none
// EHXPLLL: a simulation model of the Lattice ECP5 PLL, for the clock it makes: CLKOP runs at CLKI * CLKFB_DIV /
// CLKI_DIV (feedback from CLKOP, FEEDBK_PATH "CLKOP"), a free-running clock whose period is measured from CLKI's
// last two rising edges, and LOCK rises after 16 CLKI cycles. Phase, the other outputs and dynamic control are not
// modelled (yosys ships only a black box of the cell).
`timescale 1ns / 1ps
/* verilator lint_off WIDTHEXPAND */  // string parameters of any length from the instantiations
/* verilator lint_off ZERODLY */  // the period is measured at run time
module EHXPLLL (
  input  wire CLKI, CLKFB, PHASESEL1, PHASESEL0, PHASEDIR, PHASESTEP, PHASELOADREG, STDBY, PLLWAKESYNC, RST,
  input  wire ENCLKOP, ENCLKOS, ENCLKOS2, ENCLKOS3,
  output reg  CLKOP,
  output wire CLKOS, CLKOS2, CLKOS3,
  output reg  LOCK,
  output wire INTLOCK, REFCLK, CLKINTFB
);
  parameter CLKI_DIV = 1;
  parameter CLKFB_DIV = 1;
  parameter CLKOP_DIV = 8;
  parameter CLKOS_DIV = 8;
  parameter CLKOS2_DIV = 8;
  parameter CLKOS3_DIV = 8;
  parameter [159:0] CLKOP_ENABLE = "ENABLED";
  parameter [159:0] CLKOS_ENABLE = "DISABLED";
  parameter [159:0] CLKOS2_ENABLE = "DISABLED";
  parameter [159:0] CLKOS3_ENABLE = "DISABLED";
  parameter CLKOP_CPHASE = 0;
  parameter CLKOS_CPHASE = 0;
  parameter CLKOS2_CPHASE = 0;
  parameter CLKOS3_CPHASE = 0;
  parameter CLKOP_FPHASE = 0;
  parameter CLKOS_FPHASE = 0;
  parameter CLKOS2_FPHASE = 0;
  parameter CLKOS3_FPHASE = 0;
  parameter [159:0] FEEDBK_PATH = "CLKOP";
  parameter [159:0] CLKOP_TRIM_POL = "RISING";
  parameter CLKOP_TRIM_DELAY = 0;
  parameter [159:0] CLKOS_TRIM_POL = "RISING";
  parameter CLKOS_TRIM_DELAY = 0;
  parameter [159:0] OUTDIVIDER_MUXA = "DIVA";
  parameter [159:0] OUTDIVIDER_MUXB = "DIVB";
  parameter [159:0] OUTDIVIDER_MUXC = "DIVC";
  parameter [159:0] OUTDIVIDER_MUXD = "DIVD";
  parameter PLL_LOCK_MODE = 0;
  parameter PLL_LOCK_DELAY = 200;
  parameter [159:0] STDBY_ENABLE = "DISABLED";
  parameter [159:0] REFIN_RESET = "DISABLED";
  parameter [159:0] SYNC_ENABLE = "DISABLED";
  parameter [159:0] INT_LOCK_STICKY = "ENABLED";
  parameter [159:0] DPHASE_SOURCE = "DISABLED";
  parameter [159:0] PLLRST_ENA = "DISABLED";
  parameter [159:0] INTFB_WAKE = "DISABLED";

  assign CLKOS = 1'b0;
  assign CLKOS2 = 1'b0;
  assign CLKOS3 = 1'b0;
  assign INTLOCK = LOCK;
  assign REFCLK = CLKI;
  assign CLKINTFB = 1'b0;
  wire unused = ^{CLKFB, PHASESEL1, PHASESEL0, PHASEDIR, PHASESTEP, PHASELOADREG, STDBY, PLLWAKESYNC,
                  ENCLKOP, ENCLKOS, ENCLKOS2, ENCLKOS3};

  realtime last_edge = 0.0;
  realtime half_period = 0.0;
  integer  edges = 0;
  initial begin
    CLKOP = 1'b0;
    LOCK = 1'b0;
    if (FEEDBK_PATH != "CLKOP") begin
      $display("ERROR: EHXPLLL model %m: only FEEDBK_PATH CLKOP is modelled");
      $finish;
    end
  end
  always @(posedge CLKI or posedge RST) begin
    if (RST) begin
      edges = 0;
      LOCK <= 1'b0;
    end else begin
      if (edges > 0) begin
        half_period = ($realtime - last_edge) * CLKI_DIV / CLKFB_DIV / 2.0;
      end
      last_edge = $realtime;
      edges = edges + 1;
      if (edges >= 16) begin
        LOCK <= 1'b1;
      end
    end
  end
  always begin
    if (half_period > 0.0) begin
      #(half_period) CLKOP = !CLKOP;
    end else begin
      @(posedge CLKI);
    end
  end

endmodule
`default_nettype wire
