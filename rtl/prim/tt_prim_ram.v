`default_nettype none
// tt_prim_ram: the technology layer's block RAM: WIDTH-bit words, one write port and one read port on one clock
// (simple dual port). The core instantiates only this module; TECH picks the implementation at elaboration:
//   "generic": an inferred memory (tt_prim_ram_generic), for simulation and for parts yosys maps well;
//   "ecp5":    DP16KD block RAMs instantiated (tt_prim_ram_ecp5), so the output register is the block RAM's own;
//   "ice40":   SB_RAM40_4K block RAMs instantiated (tt_prim_ram_ice40).
// Every implementation has the same ports and cycle behaviour:
// - a write (wr_en) takes the parts of wr_data that wr_part names into word wr_addr at the clock edge (a word is
//   PARTS parts of WIDTH / PARTS bits; the others keep their bits);
// - a read (rd_en) returns word rd_addr in rd_data one cycle later (OUT_REG = 0) or two (OUT_REG = 1: an output
//   register behind the read register, clocked every cycle); rd_data holds while no read is made;
// - a read of the word written at the same edge is not defined (no implementation has read-during-write logic):
//   the accelerator never makes one (tt_bank checks it in simulation);
// - the words are not initialised.
// Parts let memories that are read at one address share a block RAM: on ECP5 two parts of up to 18 bits and up to 512
// words fill one DP16KD in its 36-bit shape, whose byte enables write each part alone; a technology that does not
// pack parts builds one memory per part.
module tt_prim_ram #(
  // public: the host's backdoor (verif/host.py) reads the shape of every memory it reads, also from builds that
  // make only the ports and the memories public (make train's)
  parameter integer WIDTH /* verilator public */ = 16,  // bits per word, 1..64
  parameter integer DEPTH /* verilator public */ = 512, // words, 1..2^AW
  parameter integer AW      = 9,   // address bits
  parameter integer OUT_REG = 0,   // 1: an output register (read latency 2)
  parameter integer PARTS   = 1,   // parts of a word written on their own, 1..WIDTH, dividing WIDTH
  parameter [63:0] TECH    = "generic"
) (
  input  wire             clk,
  input  wire             wr_en,
  input  wire [PARTS-1:0] wr_part,  // the parts a write takes (part p: wr_data[WIDTH / PARTS * p +: WIDTH / PARTS])
  input  wire [AW-1:0]    wr_addr,
  input  wire [WIDTH-1:0] wr_data,
  input  wire             rd_en,
  input  wire [AW-1:0]    rd_addr,
  output wire [WIDTH-1:0] rd_data
);

  localparam integer PW = WIDTH / PARTS;  // bits of a part
  // ECP5's 36-bit shape: 512 words of two 18-bit halves, each half's byte enables its own
  localparam integer ECP5_PACK = (PARTS == 2 && PW <= 18 && DEPTH <= 512) ? 1 : 0;

  genvar p;
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
    if (PARTS < 1 || PARTS > WIDTH || WIDTH % PARTS != 0) begin : g_bad_parts
      error_tt_prim_ram_PARTS_must_divide_WIDTH u_error ();
    end

    if (TECH == "generic") begin : g_generic
      tt_prim_ram_generic #(
        .WIDTH (WIDTH), .DEPTH (DEPTH), .AW (AW), .OUT_REG (OUT_REG), .PARTS (PARTS)
      ) u_ram (
        .clk (clk), .wr_en (wr_en), .wr_part (wr_part), .wr_addr (wr_addr), .wr_data (wr_data),
        .rd_en (rd_en), .rd_addr (rd_addr), .rd_data (rd_data)
      );
    end else if (TECH == "ecp5" && (PARTS == 1 || ECP5_PACK != 0)) begin : g_ecp5
      tt_prim_ram_ecp5 #(
        .WIDTH (WIDTH), .DEPTH (DEPTH), .AW (AW), .OUT_REG (OUT_REG), .PARTS (PARTS)
      ) u_ram (
        .clk (clk), .wr_en (wr_en), .wr_part (wr_part), .wr_addr (wr_addr), .wr_data (wr_data),
        .rd_en (rd_en), .rd_addr (rd_addr), .rd_data (rd_data)
      );
    end else if (TECH == "ecp5") begin : g_ecp5_parts  // one memory per part
      for (p = 0; p < PARTS; p = p + 1) begin : g_part
        tt_prim_ram_ecp5 #(
          .WIDTH (PW), .DEPTH (DEPTH), .AW (AW), .OUT_REG (OUT_REG), .PARTS (1)
        ) u_ram (
          .clk (clk), .wr_en (wr_en && wr_part[p]), .wr_part (1'b1), .wr_addr (wr_addr),
          .wr_data (wr_data[PW*p +: PW]), .rd_en (rd_en), .rd_addr (rd_addr), .rd_data (rd_data[PW*p +: PW])
        );
      end
    end else if (TECH == "ice40" && PARTS == 1) begin : g_ice40
      wire unused_part = ^wr_part;  // the one part: wr_en writes it
      tt_prim_ram_ice40 #(
        .WIDTH (WIDTH), .DEPTH (DEPTH), .AW (AW), .OUT_REG (OUT_REG)
      ) u_ram (
        .clk (clk), .wr_en (wr_en), .wr_addr (wr_addr), .wr_data (wr_data),
        .rd_en (rd_en), .rd_addr (rd_addr), .rd_data (rd_data)
      );
    end else if (TECH == "ice40") begin : g_ice40_parts  // one memory per part
      for (p = 0; p < PARTS; p = p + 1) begin : g_part
        tt_prim_ram_ice40 #(
          .WIDTH (PW), .DEPTH (DEPTH), .AW (AW), .OUT_REG (OUT_REG)
        ) u_ram (
          .clk (clk), .wr_en (wr_en && wr_part[p]), .wr_addr (wr_addr), .wr_data (wr_data[PW*p +: PW]),
          .rd_en (rd_en), .rd_addr (rd_addr), .rd_data (rd_data[PW*p +: PW])
        );
      end
    end else begin : g_bad_tech
      error_tt_prim_ram_TECH_must_be_generic_ecp5_or_ice40 u_error ();
    end
  endgenerate

endmodule
`default_nettype wire
