`default_nettype none
// tt_prim_ram: the technology layer's block RAM: WIDTH-bit words, one write port and one read port on one clock
// (simple dual port). The core instantiates only this module; TECH picks the implementation at elaboration:
//   "generic": an inferred memory (tt_prim_ram_generic), for simulation and for parts yosys maps well;
//   "ecp5":    DP16KD block RAMs instantiated (tt_prim_ram_ecp5), so the output register is the block RAM's own;
//   "ice40":   SB_RAM40_4K block RAMs instantiated (tt_prim_ram_ice40).
// Every implementation has the same ports and cycle behaviour:
// - a write (wr_en) takes wr_data into word wr_addr at the clock edge;
// - a read (rd_en) returns word rd_addr in rd_data one cycle later (OUT_REG = 0) or two (OUT_REG = 1: an output
//   register behind the read register, clocked every cycle); rd_data holds while no read is made;
// - a read of the word written at the same edge is not defined (no implementation has read-during-write logic):
//   the accelerator never makes one (tt_bank checks it in simulation);
// - the words are not initialised.
module tt_prim_ram #(
  // public: the host's backdoor (verif/host.py) reads the shape of every memory it reads, also from builds that
  // make only the ports and the memories public (make train's)
  parameter integer WIDTH /* verilator public */ = 16,  // bits per word, 1..64
  parameter integer DEPTH /* verilator public */ = 512, // words, 1..2^AW
  parameter integer AW      = 9,   // address bits
  parameter integer OUT_REG = 0,   // 1: an output register (read latency 2)
  parameter [63:0] TECH    = "generic"
) (
  input  wire             clk,
  input  wire             wr_en,
  input  wire [AW-1:0]    wr_addr,
  input  wire [WIDTH-1:0] wr_data,
  input  wire             rd_en,
  input  wire [AW-1:0]    rd_addr,
  output wire [WIDTH-1:0] rd_data
);

  generate
    if (WIDTH < 1 || WIDTH > 64) begin : g_bad_width
      error_tt_prim_ram_WIDTH_must_be_1_to_64 u_error ();
    end
    if (DEPTH < 1 || AW < 1 || DEPTH > (1 << AW)) begin : g_bad_depth
      error_tt_prim_ram_DEPTH_must_be_1_to_2_pow_AW u_error ();
    end
    if (OUT_REG < 0 || OUT_REG > 1) begin : g_bad_out_reg
      error_tt_prim_ram_OUT_REG_must_be_0_or_1 u_error ();
    end

    if (TECH == "generic") begin : g_generic
      tt_prim_ram_generic #(
        .WIDTH (WIDTH), .DEPTH (DEPTH), .AW (AW), .OUT_REG (OUT_REG)
      ) u_ram (
        .clk (clk), .wr_en (wr_en), .wr_addr (wr_addr), .wr_data (wr_data),
        .rd_en (rd_en), .rd_addr (rd_addr), .rd_data (rd_data)
      );
    end else if (TECH == "ecp5") begin : g_ecp5
      tt_prim_ram_ecp5 #(
        .WIDTH (WIDTH), .DEPTH (DEPTH), .AW (AW), .OUT_REG (OUT_REG)
      ) u_ram (
        .clk (clk), .wr_en (wr_en), .wr_addr (wr_addr), .wr_data (wr_data),
        .rd_en (rd_en), .rd_addr (rd_addr), .rd_data (rd_data)
      );
    end else if (TECH == "ice40") begin : g_ice40
      tt_prim_ram_ice40 #(
        .WIDTH (WIDTH), .DEPTH (DEPTH), .AW (AW), .OUT_REG (OUT_REG)
      ) u_ram (
        .clk (clk), .wr_en (wr_en), .wr_addr (wr_addr), .wr_data (wr_data),
        .rd_en (rd_en), .rd_addr (rd_addr), .rd_data (rd_data)
      );
    end else begin : g_bad_tech
      error_tt_prim_ram_TECH_must_be_generic_ecp5_or_ice40 u_error ();
    end
  endgenerate

endmodule
`default_nettype wire
